"""Download stage: fetch files (with resume, retries, checksums, mirrors), extract archives safely,
and check that licensed corpora the run needs are present."""

from xling.download.extract import UnsafeArchiveError, safe_extract
from xling.download.fetch import DownloadError, fetch, mirror_path, url_basename
from xling.download.licensed import licensed_problems, missing_licensed

__all__ = [
    "DownloadError",
    "UnsafeArchiveError",
    "fetch",
    "licensed_problems",
    "mirror_path",
    "missing_licensed",
    "safe_extract",
    "url_basename",
]
