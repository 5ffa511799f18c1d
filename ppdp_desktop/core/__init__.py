"""The Qt-free engine of PPDP Desktop: data, schema, methods, privacy checks and releases.

Nothing under this package may import Qt; ``tests/test_architecture.py`` enforces it.
"""
