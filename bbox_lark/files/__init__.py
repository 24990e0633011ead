"""Files: opening inputs (``inputs``), finding them (``discover``, ``globs``), configuration
(``config``), the write policy (``writepolicy``), atomic writes (``atomic``) and the blob
store (``blobs``).

May import :mod:`bbox_lark._classes` and :mod:`bbox_lark.errors`; ``config`` also reads the
check registry's codes and ``discover`` the format sniffers (function-local, listed in
``tools/layers.py``).
"""
