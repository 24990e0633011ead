"""``python -m bbox_lark.cli``: the ``bbox-lark`` command."""

from bbox_lark.cli import main

main()
