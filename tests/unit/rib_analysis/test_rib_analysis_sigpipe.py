"""The decompression thread survives the decoder stopping early, whatever SIGPIPE's disposition.

mrtparse (and many CLIs) restore SIGPIPE's default action at import; a write into the pipe the
decoder has closed must then fail with EPIPE, not kill the interpreter.
"""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
from pathlib import Path

SCRIPT = """
import signal, sys
signal.signal(signal.SIGPIPE, signal.SIG_DFL)
from rib_analysis.cli import main
sys.exit(main(["--log-level", "error", "classify", sys.argv[1]]))
"""


def test_corrupt_head_of_large_file_is_an_error_not_a_signal(tmp_path: Path) -> None:
    rib = tmp_path / "garbage.gz"
    # A bad first header and megabytes behind it: the decoder stops while the
    # decompression thread still has output to write.
    with gzip.open(rib, "wb", compresslevel=1) as fh:
        fh.write(b"\xff" * 64 + os.urandom(1 << 20) * 8)
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(rib)], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 65, (proc.returncode, proc.stderr[-1000:])
    assert str(rib) in proc.stderr
