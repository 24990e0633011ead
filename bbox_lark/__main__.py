"""``python -m bbox_lark``: the ``bbox-lark`` command."""

from bbox_lark.cli import main

main()
