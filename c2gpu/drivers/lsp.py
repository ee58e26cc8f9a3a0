"""`c2gpu lsp`: a language server (the Language Server Protocol over stdio, with pygls) for editors.

When a C file is opened or saved, the server analyses the editor's text as `c2gpu analyze FILE --no-run` does
(the default GPU, the static CPU estimate: no program is built or run on every save) and publishes:
  - each nest's verdict, the sentence of the SARIF report, at its `for` (information), unless the nest cannot be
    ported: then the refusal is among its diagnostics;
  - every diagnostic `analyze` prints for the nest (the limits of the proofs, the refusals, the OpenMP checks),
    with its code and level (note: information);
  - what could not be read (a syntax error costs its declaration), as errors.
A diagnostic with a fix-it carries the edit in its `data`; asked for code actions there, the server offers each
edit as a quick fix (the Fix the analysis made, the one `analyze` prints as a `fix-it:` line).

The analysis runs in a thread of its own, one file at a time, so that the server keeps answering the editor
(code actions, closing, shutting down) while a large file is analysed (NPB's BT: seconds).  It analyses the
text as it was saved; when the editor opens or saves the document again before the analysis has published,
that result is dropped and only the newest text's diagnostics are published (an analysis still waiting its
turn when a newer one is asked for does not run at all).

pygls (BSD-licensed, maintained by the Open Law Library) does the protocol: the message framing, the document
synchronisation and the position encodings, which are easy to get subtly wrong by hand.
"""
from __future__ import annotations

import asyncio
import json
import os
from concurrent.futures import ThreadPoolExecutor

from lsprotocol import types as lsp
from pygls import uris
from pygls.lsp.server import LanguageServer
from pygls.workspace import TextDocument

from .. import __version__
from ..diagnostics import C2GPUError
from ..report.sarif import message_text
from . import api
from .config import choose_gpu
from .options import OptionsError

SEVERITY = {"error": lsp.DiagnosticSeverity.Error, "warning": lsp.DiagnosticSeverity.Warning,
            "note": lsp.DiagnosticSeverity.Information}


def document_diagnostics(doc: TextDocument) -> list[lsp.Diagnostic]:
    """The diagnostics of the C text of `doc`, at the positions of the client's encoding, predicted for the GPU
    `analyze` would choose for the file (C2GPU_GPU, else c2gpu.toml or pyproject.toml beside it or above, else
    the default)."""
    path = uris.to_fs_path(doc.uri) or doc.uri

    def at(line: int, col: int, end_line: int | None = None, end_col: int | None = None) -> lsp.Range:
        """A range of the document from 1-based line:col (0: the line's first non-blank character) to
        end_line:end_col (exclusive; none: the end of the line)."""
        k = min(max(line, 1), max(len(doc.lines), 1)) - 1
        text = doc.lines[k].rstrip("\r\n") if doc.lines else ""
        start = col - 1 if col > 0 else len(text) - len(text.lstrip())
        if end_line is None:
            end = lsp.Position(k, len(text))
        else:
            end = lsp.Position(end_line - 1, end_col - 1)
        return doc.range_to_client_units(lsp.Range(lsp.Position(k, start), end))

    try:
        gpu = choose_gpu(None, cwd=os.path.dirname(os.path.abspath(path))).name
        report = api.analyze(doc.source, name=path, gpu=gpu, run_cpu=False)
    except OptionsError as e:
        return [lsp.Diagnostic(at(1, 0), str(e), lsp.DiagnosticSeverity.Error, source="c2gpu")]
    except C2GPUError as e:
        line, col = (e.loc.line, e.loc.col) if e.loc is not None else (1, 0)
        return [lsp.Diagnostic(at(line, col), e.message, lsp.DiagnosticSeverity.Error, source="c2gpu")]
    out = [lsp.Diagnostic(at(e["location"]["line"], e["location"]["col"]) if e.get("location") else at(1, 0),
                          e["message"], lsp.DiagnosticSeverity.Error, source="c2gpu")
           for e in report.input_errors]
    mine = lambda where: os.path.abspath(where["file"]) == os.path.abspath(path)     # noqa: E731 (not inlined code)
    for n in report.nests:
        if n.verdict_class != "not-portable" and mine(n.data["location"]):
            out.append(lsp.Diagnostic(at(n.location.line, n.location.col), f"{n.name}: {message_text(n, gpu)}",
                                      lsp.DiagnosticSeverity.Information, code=n.verdict_class, source="c2gpu"))
        for f in n.data.get("flags", ()):
            if not mine(f["location"]):
                continue
            fix = f.get("fix")
            data = None if fix is None or not all(mine(e) for e in fix["edits"]) else {
                "title": fix["title"], "asserts": fix.get("asserts", ""),
                "edits": [{"newText": e["replacement"],
                           "range": _plain(at(e["line"], e["col"], e["end_line"], e["end_col"]))}
                          for e in fix["edits"]]}
            out.append(lsp.Diagnostic(at(f["location"]["line"], f["location"]["col"]), f["message"],
                                      SEVERITY[f.get("level", "note")], code=f["code"], source="c2gpu", data=data))
    for f in report.data.get("notes", ()):
        if mine(f["location"]):
            out.append(lsp.Diagnostic(at(f["location"]["line"], f["location"]["col"]), f["message"],
                                      lsp.DiagnosticSeverity.Information, code=f["code"], source="c2gpu"))
    return out


def _plain(r: lsp.Range) -> dict:
    return {"start": {"line": r.start.line, "character": r.start.character},
            "end": {"line": r.end.line, "character": r.end.character}}


def code_actions(uri: str, diagnostics: list[lsp.Diagnostic]) -> list[lsp.CodeAction]:
    """A quick fix for each distinct edit the diagnostics carry (two findings on one directive: one edit)."""
    fixes: dict[str, tuple[dict, list[lsp.Diagnostic]]] = {}
    for d in diagnostics:
        data = d.data if isinstance(d.data, dict) else None
        if data and d.source == "c2gpu" and {"title", "asserts", "edits"} <= data.keys():
            fixes.setdefault(json.dumps(data, sort_keys=True), (data, []))[1].append(d)
    return [lsp.CodeAction(title=f"c2gpu: {data['title']}" + (f" (check: {data['asserts']})" if data["asserts"] else ""),
                           kind=lsp.CodeActionKind.QuickFix, diagnostics=ds, is_preferred=not data["asserts"],
                           edit=lsp.WorkspaceEdit(changes={uri: [lsp.TextEdit(
                               lsp.Range(lsp.Position(e["range"]["start"]["line"], e["range"]["start"]["character"]),
                                         lsp.Position(e["range"]["end"]["line"], e["range"]["end"]["character"])),
                               e["newText"]) for e in data["edits"]]}))
            for data, ds in fixes.values()]


class Analyses:
    """The analyses the editor asked for: one at a time, in a thread of their own, the newest per document."""

    def __init__(self) -> None:
        self.worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="c2gpu-analysis")
        self.newest: dict[str, object] = {}      # document uri -> the token of its newest request

    async def publish(self, ls: LanguageServer, uri: str) -> None:
        """Analyse the document's text as it is now and publish its diagnostics, unless a newer request for the
        document (or its closing) came first."""
        doc = ls.workspace.get_text_document(uri)
        # the editor's later changes update `doc` on the server's thread: the analysis reads a copy
        text = TextDocument(uri, doc.source, doc.version, doc.language_id, position_codec=doc.position_codec)
        token = self.newest[uri] = object()

        def analyse() -> list[lsp.Diagnostic] | None:
            return document_diagnostics(text) if self.newest.get(uri) is token else None
        diagnostics = await asyncio.get_running_loop().run_in_executor(self.worker, analyse)
        if diagnostics is not None and self.newest.get(uri) is token:
            ls.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(
                uri=uri, version=text.version, diagnostics=diagnostics))

    def forget(self, uri: str) -> None:
        self.newest.pop(uri, None)


def make_server() -> LanguageServer:
    server = LanguageServer("c2gpu", __version__)
    analyses = Analyses()

    @server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
    async def did_open(ls: LanguageServer, params: lsp.DidOpenTextDocumentParams) -> None:
        await analyses.publish(ls, params.text_document.uri)

    @server.feature(lsp.TEXT_DOCUMENT_DID_SAVE)
    async def did_save(ls: LanguageServer, params: lsp.DidSaveTextDocumentParams) -> None:
        await analyses.publish(ls, params.text_document.uri)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: LanguageServer, params: lsp.DidCloseTextDocumentParams) -> None:
        analyses.forget(params.text_document.uri)
        ls.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=params.text_document.uri,
                                                                          diagnostics=[]))

    @server.feature(lsp.TEXT_DOCUMENT_CODE_ACTION,
                    lsp.CodeActionOptions(code_action_kinds=[lsp.CodeActionKind.QuickFix]))
    def actions(ls: LanguageServer, params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
        return code_actions(params.text_document.uri, params.context.diagnostics)

    return server


def serve() -> None:
    """Serve one editor over stdin and stdout until it asks the server to exit."""
    make_server().start_io()
