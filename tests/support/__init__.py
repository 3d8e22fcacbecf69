"""Builders for real test inputs: wheels from dicts, ELF files from gcc, a package index on 127.0.0.1."""
