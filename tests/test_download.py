"""xling.download: fetch against a local HTTP server (Range, cuts, 503s), mirrors, safe extraction,
licensed-corpus checks."""

from __future__ import annotations

import hashlib
import http.server
import io
import os
import socket
import tarfile
import threading
import time
import zipfile
from pathlib import Path

import pytest

from xling.download import (
    DownloadError,
    UnsafeArchiveError,
    fetch,
    mirror_path,
    missing_licensed,
    safe_extract,
)
from xling.download.licensed import needed_licensed, unavailable_ner_targets

NO_WAIT = lambda attempt: 0.0  # noqa: E731 - tests must not sleep between retries


class _Handler(http.server.BaseHTTPRequestHandler):
    """Serves ``server.files``; honours Range unless told not to; can cut or 503 on request."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args):  # keep pytest output clean
        pass

    def do_GET(self):
        srv = self.server
        srv.requests.append((self.path, dict(self.headers)))
        if srv.stall > 0:
            stall, srv.stall = srv.stall, 0
            time.sleep(stall)  # longer than the client's timeout: a hung server
        if srv.fail_503 > 0:
            srv.fail_503 -= 1
            self.send_response(503)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        body = srv.files.get(self.path)
        if body is None:
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        start = 0
        rng = self.headers.get("Range")
        if rng and not srv.ignore_range:
            start = int(rng.split("=")[1].split("-")[0])
            if start >= len(body):
                self.send_response(416)
                self.send_header("Content-Range", f"bytes */{len(body)}")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
        else:
            self.send_response(200)
        payload = body[start:]
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        if srv.cut_after is not None:
            n, srv.cut_after = srv.cut_after, None
            self.wfile.write(payload[:n])
            self.wfile.flush()
            # Drop the connection mid-body, as a flaky network would.
            self.connection.shutdown(socket.SHUT_RDWR)
            self.close_connection = True
            return
        self.wfile.write(payload)


@pytest.fixture
def server():
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    srv.files, srv.requests = {}, []
    srv.fail_503, srv.cut_after, srv.ignore_range, srv.stall = 0, None, False, 0
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    srv.url = f"http://127.0.0.1:{srv.server_address[1]}"
    yield srv
    srv.shutdown()
    srv.server_close()


def _payload(n: int = 300_000) -> bytes:
    return os.urandom(n)


def _sha(b: bytes) -> str:
    return hashlib.sha256(b).hexdigest()


def test_plain_download_writes_file_and_digest(server, tmp_path):
    body = _payload()
    server.files["/data/a.bin"] = body
    dest = tmp_path / "out" / "a.bin"
    digest = fetch(server.url + "/data/a.bin", dest, sha256=None, backoff=NO_WAIT)
    assert digest == _sha(body)
    assert dest.read_bytes() == body
    assert (tmp_path / "out" / "a.bin.sha256").read_text().split() == [_sha(body), "a.bin"]
    assert not (tmp_path / "out" / "a.bin.part").exists()


def test_interrupted_transfer_resumes_with_range(server, tmp_path):
    body = _payload()
    server.files["/f.bin"] = body
    server.cut_after = 100_000
    dest = tmp_path / "f.bin"
    digest = fetch(server.url + "/f.bin", dest, sha256=_sha(body), backoff=NO_WAIT)
    assert digest == _sha(body) and dest.read_bytes() == body
    assert len(server.requests) == 2
    assert "Range" not in server.requests[0][1]
    assert server.requests[1][1]["Range"] == "bytes=100000-"


def test_leftover_part_is_resumed_by_a_new_job(server, tmp_path):
    body = _payload()
    server.files["/f.bin"] = body
    dest = tmp_path / "f.bin"
    (tmp_path / "f.bin.part").write_bytes(body[:12345])  # a previous job died here
    fetch(server.url + "/f.bin", dest, sha256=_sha(body), backoff=NO_WAIT)
    assert dest.read_bytes() == body
    assert server.requests[0][1]["Range"] == "bytes=12345-"


def test_complete_leftover_part_gets_416_and_is_kept(server, tmp_path):
    body = _payload(4000)
    server.files["/f.bin"] = body
    (tmp_path / "f.bin.part").write_bytes(body)  # the job died after the last byte, before the rename
    assert fetch(server.url + "/f.bin", tmp_path / "f.bin", sha256=_sha(body), backoff=NO_WAIT) == _sha(body)
    assert (tmp_path / "f.bin").read_bytes() == body and len(server.requests) == 1


def test_server_ignoring_range_restarts_from_zero(server, tmp_path):
    body = _payload()
    server.files["/f.bin"] = body
    server.ignore_range = True
    dest = tmp_path / "f.bin"
    (tmp_path / "f.bin.part").write_bytes(b"X" * 5000)  # junk: must not be kept as a prefix
    fetch(server.url + "/f.bin", dest, sha256=_sha(body), backoff=NO_WAIT)
    assert dest.read_bytes() == body


def test_checksum_mismatch_leaves_nothing(server, tmp_path):
    body = _payload()
    server.files["/f.bin"] = body[:-1] + bytes([body[-1] ^ 0xFF])  # corrupted on the server
    dest = tmp_path / "f.bin"
    with pytest.raises(DownloadError) as err:
        fetch(server.url + "/f.bin", dest, sha256=_sha(body), backoff=NO_WAIT)
    msg = str(err.value)
    assert _sha(body) in msg and _sha(server.files["/f.bin"]) in msg
    assert list(tmp_path.iterdir()) == []


def test_retries_after_503(server, tmp_path):
    body = _payload(1000)
    server.files["/f.bin"] = body
    server.fail_503 = 2
    dest = tmp_path / "f.bin"
    fetch(server.url + "/f.bin", dest, retries=2, backoff=NO_WAIT)
    assert dest.read_bytes() == body and len(server.requests) == 3


def test_timeout_is_retried(server, tmp_path):
    body = _payload(1000)
    server.files["/f.bin"] = body
    server.stall = 1.5
    fetch(server.url + "/f.bin", tmp_path / "f.bin", timeout=0.5, retries=1, backoff=NO_WAIT)
    assert (tmp_path / "f.bin").read_bytes() == body and len(server.requests) == 2


def test_gives_up_after_retries_and_on_404(server, tmp_path):
    server.files["/f.bin"] = b"x"
    server.fail_503 = 10
    with pytest.raises(DownloadError, match="giving up after 3 attempts"):
        fetch(server.url + "/f.bin", tmp_path / "f.bin", retries=2, backoff=NO_WAIT)
    server.fail_503 = 0
    n = len(server.requests)
    with pytest.raises(DownloadError, match="404"):
        fetch(server.url + "/nope.bin", tmp_path / "nope.bin", retries=5, backoff=NO_WAIT)
    assert len(server.requests) == n + 1  # a 404 is not retried
    assert not (tmp_path / "f.bin").exists() and not (tmp_path / "nope.bin").exists()


def test_mirror_mode_never_touches_network(server, tmp_path):
    body = _payload(5000)
    url = "https://dl.fbaipublicfiles.com/XNLI/XNLI-1.0.zip"
    mirror = tmp_path / "mirror"
    src = mirror / "dl.fbaipublicfiles.com" / "XNLI" / "XNLI-1.0.zip"
    assert mirror_path(url, mirror) == src
    src.parent.mkdir(parents=True)
    src.write_bytes(body)
    server.shutdown()  # any network access would now fail
    dest = tmp_path / "dl" / "XNLI-1.0.zip"
    assert fetch(url, dest, sha256=_sha(body), mirror=mirror, retries=0) == _sha(body)
    assert dest.read_bytes() == body and server.requests == []
    with pytest.raises(DownloadError) as err:
        fetch("https://dl.fbaipublicfiles.com/XNLI/XNLI-15way.zip", tmp_path / "dl" / "x.zip", mirror=mirror)
    assert str(mirror / "dl.fbaipublicfiles.com" / "XNLI" / "XNLI-15way.zip") in str(err.value)


def test_mirror_path_drops_query_string(tmp_path):
    url = "https://www.dropbox.com/s/12h3qqog6q4bjve/panx_dataset.tar?dl=1"
    assert mirror_path(url, tmp_path) == tmp_path / "www.dropbox.com/s/12h3qqog6q4bjve/panx_dataset.tar"


def test_file_url_and_idempotent_rerun(tmp_path):
    src = tmp_path / "src.txt"
    src.write_bytes(b"hello\n")
    dest = tmp_path / "d" / "src.txt"
    d1 = fetch(src.as_uri(), dest)
    src.write_bytes(b"changed\n")
    assert fetch(src.as_uri(), dest) == d1  # already there, nothing pinned: kept
    assert fetch(src.as_uri(), dest, sha256=_sha(b"changed\n")) == _sha(b"changed\n")  # pin differs: refetched
    assert dest.read_bytes() == b"changed\n"


# ---------------------------------------------------------------------------------------------
# safe_extract


def _tar(path: Path, members: list[tuple[tarfile.TarInfo, bytes | None]], mode: str = "w") -> Path:
    with tarfile.open(path, mode) as tf:
        for info, data in members:
            if data is not None:
                info.size = len(data)
                tf.addfile(info, io.BytesIO(data))
            else:
                tf.addfile(info)
    return path


def _file(name: str) -> tarfile.TarInfo:
    return tarfile.TarInfo(name)


def _link(name: str, target: str, kind=tarfile.SYMTYPE) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, target
    return info


@pytest.mark.parametrize("suffix,mode", [(".tar", "w"), (".tar.gz", "w:gz"), (".tgz", "w:gz"),
                                         (".tar.bz2", "w:bz2"), (".tar.xz", "w:xz")])
def test_extract_tar_formats(tmp_path, suffix, mode):
    arc = _tar(tmp_path / f"a{suffix}", [(_file("top/x.txt"), b"x"), (_file("top/sub/y.txt"), b"yy"),
                                       (_link("top/l", "sub/y.txt"), None)], mode)
    out = safe_extract(arc, tmp_path / "out")
    assert (out / "top/x.txt").read_bytes() == b"x"
    assert (out / "top/sub/y.txt").read_bytes() == b"yy"
    assert (out / "top/l").read_bytes() == b"yy"


def test_extract_zip_and_idempotence(tmp_path):
    arc = tmp_path / "a.zip"
    with zipfile.ZipFile(arc, "w") as zf:
        zf.writestr("XNLI-1.0/xnli.dev.tsv", "a\tb\n")
    out = safe_extract(arc, tmp_path / "out")
    assert (out / "XNLI-1.0/xnli.dev.tsv").read_text() == "a\tb\n"
    (out / "XNLI-1.0/xnli.dev.tsv").write_text("edited")  # marker matches: not re-extracted
    safe_extract(arc, out)
    assert (out / "XNLI-1.0/xnli.dev.tsv").read_text() == "edited"
    os.utime(arc, ns=(0, 0))  # the archive changed: re-extract
    safe_extract(arc, out)
    assert (out / "XNLI-1.0/xnli.dev.tsv").read_text() == "a\tb\n"


def _refused(tmp_path: Path, arc: Path, match: str) -> None:
    with pytest.raises(UnsafeArchiveError, match=match):
        safe_extract(arc, tmp_path / "out")
    # nothing written: neither the target nor a temp dir, nor anything outside
    assert sorted(p.name for p in tmp_path.iterdir()) == [arc.name]


def test_tar_with_dotdot_member_refused(tmp_path):
    arc = _tar(tmp_path / "evil.tar", [(_file("ok.txt"), b"ok"), (_file("../escape.txt"), b"bad")])
    _refused(tmp_path, arc, r"contains '\.\.'")


def test_zip_with_absolute_path_refused(tmp_path):
    arc = tmp_path / "evil.zip"
    with zipfile.ZipFile(arc, "w") as zf:
        zf.writestr("ok.txt", "ok")
        zf.writestr(zipfile.ZipInfo("/tmp/abs.txt"), "bad")
    _refused(tmp_path, arc, "absolute path")


def test_symlink_escaping_refused(tmp_path):
    arc = _tar(tmp_path / "evil.tar", [(_link("a/b/up", "../../../outside"), None)])
    _refused(tmp_path, arc, "points outside")
    arc.unlink()
    arc = _tar(tmp_path / "evil2.tar", [(_link("abs", "/etc/passwd"), None)])
    _refused(tmp_path, arc, "absolute path")


def test_symlink_chain_escape_caught_by_data_filter(tmp_path):
    # Each link is lexically inside, but a/b/d -> ../.. makes a/b/d/up -> ../.. climb out for real.
    arc = _tar(tmp_path / "chain.tar", [(_link("a/b/d", "../.."), None), (_link("a/b/d/up", "../x"), None)])
    with pytest.raises(UnsafeArchiveError):
        safe_extract(arc, tmp_path / "out")
    assert not (tmp_path / "out").exists() and not (tmp_path / "x").exists()


def test_zip_symlink_escaping_refused(tmp_path):
    arc = tmp_path / "evil.zip"
    info = zipfile.ZipInfo("link")
    info.external_attr = (0o120777 << 16)
    with zipfile.ZipFile(arc, "w") as zf:
        zf.writestr(info, "../../etc/passwd")
    _refused(tmp_path, arc, "points outside")


# ---------------------------------------------------------------------------------------------
# licensed corpora


def _config(tmp_path: Path, conll_path, levow_path, pairs=("en-fr", "en-zh")):
    return {
        "pairs": list(pairs),
        "finetune": {"tasks": ["xnli", "ner"], "ner": {"datasets": {"fr": "wikiann", "zh": "levow"}}},
        "licensed": {
            "conll2003_en": {"path": conll_path, "files": ["eng.train", "eng.testa", "eng.testb"],
                             "how": "Get CoNLL-2003 from clips."},
            "levow_zh": {"path": levow_path, "files": ["train.txt", "test.txt"], "how": "Get Levow from SIGHAN."},
        },
    }


def test_licensed_needed_only_for_levow_pairs(tmp_path):
    assert needed_licensed(_config(tmp_path, None, None, pairs=("en-fr", "en-ru"))) == {}
    assert set(needed_licensed(_config(tmp_path, None, None))) == {"levow_zh", "conll2003_en"}
    cfg = _config(tmp_path, None, None)
    cfg["finetune"]["tasks"] = ["xnli"]
    assert missing_licensed(cfg) == []


def test_licensed_messages_say_what_where_how(tmp_path):
    conll = tmp_path / "conll"
    conll.mkdir()
    (conll / "eng.train").write_text("x")
    msgs = missing_licensed(_config(tmp_path, str(conll), None))
    assert len(msgs) == 2
    levow = next(m for m in msgs if "levow_zh" in m)
    assert "licensed.levow_zh.path is not set" in levow and "Get Levow from SIGHAN." in levow
    assert "en-zh" in levow
    conll_msg = next(m for m in msgs if "conll2003_en" in m)
    assert "eng.testa, eng.testb" in conll_msg and str(conll) in conll_msg and "eng.train," not in conll_msg
    # the en-zh NER cell cannot run, and says why; en-fr needs nothing licensed
    unavailable = unavailable_ner_targets(_config(tmp_path, str(conll), None))
    assert list(unavailable) == ["zh"]
    assert "Get Levow from SIGHAN." in unavailable["zh"] and "eng.testa, eng.testb" in unavailable["zh"]
    for f in ("eng.testa", "eng.testb"):
        (conll / f).write_text("x")
    lev = tmp_path / "lev"
    lev.mkdir()
    for f in ("train.txt", "test.txt"):
        (lev / f).write_text("x")
    assert missing_licensed(_config(tmp_path, str(conll), str(lev))) == []
    assert unavailable_ner_targets(_config(tmp_path, str(conll), str(lev))) == {}


def test_licensed_paths_the_workflow_generates_are_not_checked(tmp_path):
    testbed = tmp_path / "results/demo/testbed"
    cfg = _config(tmp_path, str(testbed / "mirror/licensed/conll2003"), str(testbed / "mirror/licensed/levow"))
    assert len(missing_licensed(cfg)) == 2  # not there yet
    assert missing_licensed(cfg, generated_under=testbed) == []
    cfg["licensed"]["levow_zh"]["path"] = None  # an unset path is still an error
    assert len(missing_licensed(cfg, generated_under=testbed)) == 1


def _deb(path: Path, data_tar: bytes, data_name: str = "data.tar.xz") -> Path:
    """A Debian package as dpkg-deb lays it out: an ar archive of debian-binary, control.tar.xz and
    the data tar, each member after a 60-byte header and padded to an even offset."""
    def member(name: str, payload: bytes) -> bytes:
        header = f"{name:<16}{0:<12}{0:<6}{0:<6}{100644:<8}{len(payload):<10}`\n".encode()
        assert len(header) == 60
        return header + payload + (b"\n" if len(payload) % 2 else b"")

    path.write_bytes(b"!<arch>\n" + member("debian-binary", b"2.0\n") + member("control.tar.xz", b"x" * 7)
                     + member(data_name, data_tar))
    return path


def test_extract_deb_installs_its_data_tar(tmp_path):
    """A .deb's data.tar.* is what is extracted (FreeDict's dictionaries as Debian ships them:
    usr/share/dictd/...); its other members are not; a cut package or one that is no ar archive
    is refused naming the file, nothing written."""
    data = _tar(tmp_path / "data.tar.xz", [(_file("./usr/share/dictd/freedict-eng-fra.index"), b"cat\tA\tB\n"),
                                           (_file("./usr/share/dictd/freedict-eng-fra.dict.dz"), b"dz")], "w:xz")
    deb = _deb(tmp_path / "dict-freedict-eng-fra_2022.04.21-1_all.deb", data.read_bytes())
    data.unlink()
    out = safe_extract(deb, tmp_path / "out")
    assert (out / "usr/share/dictd/freedict-eng-fra.index").read_bytes() == b"cat\tA\tB\n"
    assert not (out / "debian-binary").exists() and not (out / "control.tar.xz").exists()
    cut = tmp_path / "cut.deb"
    cut.write_bytes(deb.read_bytes()[:-50])
    with pytest.raises(ValueError, match="cut.deb: member 'data.tar.xz' runs past the end of the file"):
        safe_extract(cut, tmp_path / "cut_out")
    assert not (tmp_path / "cut_out").exists()
    (tmp_path / "not.deb").write_bytes(b"PK\x03\x04 a zip, not a package")
    with pytest.raises(ValueError, match="not.deb: not a Debian package"):
        safe_extract(tmp_path / "not.deb", tmp_path / "not_out")
    evil = _deb(tmp_path / "evil.deb", _tar(tmp_path / "evil.tar", [(_file("../escape.txt"), b"bad")]).read_bytes(),
                "data.tar")
    with pytest.raises(UnsafeArchiveError, match=r"contains '\.\.'"):
        safe_extract(evil, tmp_path / "evil_out")


def test_a_mirror_is_built_from_local_copies_and_fetched_hosts(server, tmp_path):
    """xling.download.mirror: a pinned entry whose file lies in a local folder (any depth, matched
    by name and sha256) is linked in; one of a fetched host is downloaded; a local file of the right
    name but another digest, an unpinned entry and another host's file are listed as missing; a
    second build keeps everything; the download stage then reads the mirror without the network."""
    from xling.download.mirror import build_mirror

    local, other = _payload(3000), _payload(2000)
    shared = tmp_path / "shared" / "eltec" / "eng"
    shared.mkdir(parents=True)
    (shared / "ENG18400_Trollope.xml").write_bytes(local)
    (shared / "wrong.conllu").write_bytes(b"not the pinned file")
    renamed = _payload(1000)
    (shared / "001_Shinel.xml").write_bytes(renamed)  # its URL names it "001 Shinel .xml"
    served = _payload(4000)
    server.files["/debian/pool/main/f/freedict/dict.deb"] = served
    host = server.url.split("//")[1]
    downloads = {
        "eltec": {"url": "https://raw.githubusercontent.com/COST-ELTeC/ELTeC-eng/3db3b67/level1/ENG18400_Trollope.xml",
                  "sha256": _sha(local)},
        "deb": {"url": f"{server.url}/debian/pool/main/f/freedict/dict.deb", "sha256": _sha(served)},
        "wrong": {"url": "https://raw.githubusercontent.com/UD/r2.3/wrong.conllu", "sha256": _sha(other)},
        "unpinned": {"url": "https://example.org/ENG18400_Trollope.xml", "sha256": None},
        "elsewhere": {"url": "https://dl.fbaipublicfiles.com/XNLI/XNLI-1.0.zip", "sha256": _sha(other)},
        "renamed": {"url": "https://raw.githubusercontent.com/COST-ELTeC/ELTeC-rus/fc5014b/level0/001%20Shinel%20.xml",
                    "sha256": _sha(renamed)},
    }
    mirror = tmp_path / "mirror"
    report = build_mirror(downloads, mirror, [tmp_path / "shared"], [host])
    assert (report.linked, report.fetched, report.kept) == (["eltec", "renamed"], ["deb"], [])
    assert mirror_path(downloads["renamed"]["url"], mirror).read_bytes() == renamed  # found by its digest
    assert sorted(report.missing) == ["elsewhere", "unpinned", "wrong"]
    assert "no sha256 pinned" in report.missing["unpinned"]
    linked = mirror_path(downloads["eltec"]["url"], mirror)
    assert linked.is_symlink() and linked.read_bytes() == local
    again = build_mirror(downloads, mirror, [tmp_path / "shared"], [host])
    assert sorted(again.kept) == ["deb", "eltec", "renamed"] and not again.linked and not again.fetched
    server.shutdown()  # the download stage reads the mirror, never the network
    for rid in ("eltec", "deb"):
        dest = tmp_path / "dl" / rid
        assert fetch(downloads[rid]["url"], dest, downloads[rid]["sha256"], mirror=mirror) == downloads[rid]["sha256"]
    with pytest.raises(FileNotFoundError, match="no such folder"):
        build_mirror(downloads, mirror, [tmp_path / "nowhere"])
