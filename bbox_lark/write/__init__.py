"""Writing a log as a session runs: :class:`~bbox_lark.write.writer.Writer` (``writer``) and
the values it writes (``values``; docs/writing.md).

May import :mod:`bbox_lark.syntax`, :mod:`bbox_lark.secrets` and :mod:`bbox_lark.files`.
"""
