"""`c2gpu lsp`, driven through a real LSP session over stdio: the server is `python -m c2gpu lsp` in its own
process and this test is the editor, speaking JSON-RPC with Content-Length framing (the protocol as written,
not pygls's test client): initialize, open a file, receive its diagnostics, ask for code actions, apply the
edit, save, receive the new diagnostics, shut down."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import queue
from pathlib import Path

import pytest

from test_openmp_checks import SOURCE

FIXED_DIRECTIVE = "#pragma omp parallel for private(t, q) reduction(+:sum) private(j)"


class Editor:
    """The client side of one session with the server."""

    def __init__(self, cwd: Path):
        env = {**os.environ, "C2GPU_GPU": "h100-sxm"}
        self.proc = subprocess.Popen([sys.executable, "-m", "c2gpu", "lsp"], cwd=cwd, env=env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.next_id = 0
        self.messages: queue.Queue = queue.Queue()
        self.backlog: list[dict] = []     # messages read while waiting for another, in their order
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        out = self.proc.stdout
        while True:
            headers = {}
            while (line := out.readline()) not in (b"\r\n", b""):
                name, _, value = line.decode("ascii").partition(":")
                headers[name.strip().lower()] = value.strip()
            if not headers:
                return
            self.messages.put(json.loads(out.read(int(headers["content-length"]))))

    def send(self, message: dict) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode("utf-8")
        self.proc.stdin.write(f"Content-Length: {len(body)}\r\n\r\n".encode("ascii") + body)
        self.proc.stdin.flush()

    def request(self, method: str, params: dict) -> dict:
        self.next_id += 1
        self.send({"id": self.next_id, "method": method, "params": params})
        m = self.wait(lambda m: m.get("id") == self.next_id and "method" not in m)
        assert "error" not in m, m
        return m["result"]

    def wait(self, wanted) -> dict:
        """The first message (kept from earlier waits, or new) for which `wanted` is true; the others are kept."""
        for k, m in enumerate(self.backlog):
            if wanted(m):
                return self.backlog.pop(k)
        while True:
            m = self.messages.get(timeout=60)
            if wanted(m):
                return m
            self.backlog.append(m)

    def notify(self, method: str, params: dict) -> None:
        self.send({"method": method, "params": params})

    def open(self, root: Path, uri: str, text: str) -> list[dict]:
        """Initialize the session in `root`, open the document, and return the diagnostics published for it."""
        self.start(root, uri, text)
        published = self.notification("textDocument/publishDiagnostics")
        assert published["uri"] == uri
        return published["diagnostics"]

    def start(self, root: Path, uri: str, text: str) -> None:
        """Initialize the session in `root` and open the document."""
        self.server = self.request("initialize", {"processId": os.getpid(), "rootUri": root.as_uri(),
                                                  "capabilities": {}})
        self.notify("initialized", {})
        self.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "c", "version": 1,
                                                              "text": text}})

    def notification(self, method: str) -> dict:
        return self.wait(lambda m: m.get("method") == method)["params"]


@pytest.fixture
def editor(tmp_path):
    e = Editor(tmp_path)
    yield e
    if e.proc.poll() is None:
        e.proc.kill()
    e.proc.wait()


def test_diagnostics_code_actions_and_the_edit(tmp_path, editor):
    path = tmp_path / "omp.c"
    path.write_text(SOURCE)
    uri = path.as_uri()
    diags = editor.open(tmp_path, uri, SOURCE)
    assert editor.server["capabilities"]["codeActionProvider"]["codeActionKinds"] == ["quickfix"]
    assert editor.server["serverInfo"]["name"] == "c2gpu"
    by_code = {}
    for d in diags:
        by_code.setdefault(d["code"], []).append(d)
    # the OpenMP checks, with their levels (1 error, 2 warning, 3 information) and ranges (0-based)
    race, = by_code["omp-race"]
    assert race["severity"] == 1 and race["range"]["start"] == {"line": 9, "character": 2}
    assert "a[i - 1] (line 12) reads the element of a written by a[i] (line 12)" in race["message"]
    missing = by_code["omp-missing-clause"]
    assert [d["severity"] for d in missing] == [2, 2]
    assert missing[0]["range"] == {"start": {"line": 3, "character": 2}, "end": {"line": 3, "character": 40}}
    assert by_code["omp-unneeded-clause"][0]["severity"] == 3
    # the first nest's verdict at its for, as the SARIF report words it (its size n is unknown: no verdict)
    verdict, = [d for d in diags if d["message"].startswith("g@5: ")]
    assert verdict["range"]["start"] == {"line": 4, "character": 2} and verdict["severity"] == 3
    assert "no verdict on h100-sxm" in verdict["message"]

    # code actions on the directive: one quick fix (the two warnings share the edit), the analysis's fix-it
    actions = editor.request("textDocument/codeAction", {
        "textDocument": {"uri": uri}, "range": missing[0]["range"], "context": {"diagnostics": missing}})
    action, = actions
    assert action["title"] == "c2gpu: add reduction(+:sum) private(j)" and action["kind"] == "quickfix"
    assert len(action["diagnostics"]) == 2
    edit, = action["edit"]["changes"][uri]
    assert edit == {"range": missing[0]["range"], "newText": FIXED_DIRECTIVE}
    # the editor applies it (as an editor would: the range in the document's lines) and saves
    lines = SOURCE.split("\n")
    r = edit["range"]
    assert r["start"]["line"] == r["end"]["line"]
    line = lines[r["start"]["line"]]
    lines[r["start"]["line"]] = line[:r["start"]["character"]] + edit["newText"] + line[r["end"]["character"]:]
    fixed = "\n".join(lines)
    editor.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2},
                                             "contentChanges": [{"text": fixed}]})
    path.write_text(fixed)
    editor.notify("textDocument/didSave", {"textDocument": {"uri": uri}})
    again = editor.notification("textDocument/publishDiagnostics")["diagnostics"]
    codes = {d["code"] for d in again}
    assert "omp-missing-clause" not in codes and "omp-race" in codes

    assert editor.request("shutdown", None) is None
    editor.notify("exit", None)
    assert editor.proc.wait(timeout=30) == 0


def test_unreadable_text_is_an_error_diagnostic(tmp_path, editor):
    """A declaration that does not parse is an error at its line; the nests after it are still analysed."""
    diags = editor.open(tmp_path, (tmp_path / "bad.c").as_uri(), "int broken( {\n" + SOURCE)
    errors = [d for d in diags if d["severity"] == 1 and "code" not in d]
    assert errors and errors[0]["range"]["start"]["line"] == 0
    assert any(d.get("code") == "omp-race" and d["range"]["start"]["line"] == 10 for d in diags)


def test_an_edit_that_asserts_is_offered_but_not_preferred(tmp_path, editor):
    """The unblocking edit of tests/test_unblock.py (restrict on two parameters): one code action with both
    edits, not marked preferred, its title saying what the user must check."""
    from test_unblock import LIBRARY
    uri = (tmp_path / "lib.c").as_uri()
    diags = editor.open(tmp_path, uri, LIBRARY)
    unblocking = [d for d in diags if d.get("code") == "unblocking-edit"]
    assert [d["range"]["start"]["line"] for d in unblocking] == [3, 8]
    action, = editor.request("textDocument/codeAction", {
        "textDocument": {"uri": uri}, "range": unblocking[0]["range"], "context": {"diagnostics": unblocking[:1]}})
    assert action["title"].startswith("c2gpu: declare 'dst' and 'src' restrict (check: no call of scale() passes")
    assert not action.get("isPreferred")
    assert action["edit"]["changes"][uri] == [
        {"range": {"start": {"line": 1, "character": 25}, "end": {"line": 1, "character": 25}}, "newText": "restrict "},
        {"range": {"start": {"line": 1, "character": 44}, "end": {"line": 1, "character": 44}}, "newText": "restrict "}]


def test_the_server_answers_while_it_analyses_and_publishes_the_newest_text_only(tmp_path, editor):
    """The analysis runs off the thread that answers the editor: a code action asked for right after opening is
    answered before the file's diagnostics come (the first analysis alone loads the analyses, hundreds of
    milliseconds).  The text is then changed and saved before that first analysis is done: its result is
    dropped, and the first diagnostics published are those of version 2 (no race left in it)."""
    path = tmp_path / "omp.c"
    path.write_text(SOURCE)
    uri = path.as_uri()
    editor.start(tmp_path, uri, SOURCE)
    whole = {"start": {"line": 0, "character": 0}, "end": {"line": 1, "character": 0}}
    editor.next_id += 1
    editor.send({"id": editor.next_id, "method": "textDocument/codeAction",
                 "params": {"textDocument": {"uri": uri}, "range": whole, "context": {"diagnostics": []}}})
    fixed = SOURCE.replace("a[i] = a[i - 1] + 1;", "a[i] = b[i] + 1;")
    assert fixed != SOURCE
    editor.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2},
                                             "contentChanges": [{"text": fixed}]})
    path.write_text(fixed)
    editor.notify("textDocument/didSave", {"textDocument": {"uri": uri}})
    first = editor.messages.get(timeout=60)
    assert first.get("id") == editor.next_id and first["result"] == [], first
    published = editor.notification("textDocument/publishDiagnostics")
    assert published["version"] == 2
    assert "omp-race" not in {d.get("code") for d in published["diagnostics"]}
    assert editor.request("shutdown", None) is None
    assert not [m for m in editor.backlog if m.get("method") == "textDocument/publishDiagnostics"]
