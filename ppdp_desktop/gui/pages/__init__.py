"""The wizard's pages, one module each."""
