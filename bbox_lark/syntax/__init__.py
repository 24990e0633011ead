"""The language: the grammar and everything that reads, builds or prints a line.

``grammar`` loads ``bbox.lark`` and derives every vocabulary from it; ``source`` splits bytes
into physical lines; ``scan`` and ``parser`` read lines into the typed nodes of ``nodes``
(through ``shape``), ``header`` reads the YAML header; ``build`` and ``transform`` make nodes
from values; ``printer`` writes them back; ``text`` and ``values`` read the written forms of
text and typed values; ``correlate`` pairs the lines of a call; ``jsonout`` turns nodes into
JSON-ready values; ``pygments_lexer`` colours bbox text.

May import: :mod:`bbox_lark._classes`, :mod:`bbox_lark.errors`, and from :mod:`bbox_lark.files`
only ``blobs`` (the blob store a text may point to). Nothing above (checks, numbers,
converters, the CLI) is imported here; ``nodes`` imports nothing of the package but
``_classes`` and ``values`` (``tools/layers.py`` checks both).
"""
