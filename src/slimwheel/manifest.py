"""The manifest, ``<dist>.dist-info/slimwheel.json``: what repair and build did, for run time to read.

The model lives in ``slimwheel.runtime.manifest``, standard library only, so that the run-time loader
(and the copy of it ``repair --embed-loader`` writes into a package) reads it without slimwheel.
"""

from slimwheel.runtime.manifest import MANIFEST_NAME, SCHEMA, Manifest, ManifestError, ManifestLibrary

__all__ = ["MANIFEST_NAME", "SCHEMA", "Manifest", "ManifestError", "ManifestLibrary"]
