"""A local, in-memory, Hub-compatible HTTP server for the tests: the subset of the Hugging Face Hub API that
`huggingface_hub` (whoami, create_repo, auth_check, upload_folder, create_tag, snapshot_download) and
`datasets.load_dataset` call. Plain stdlib (ThreadingHTTPServer in a thread); nothing leaves 127.0.0.1.

Auth: `WRITER` may write to org `grip-test`; `READER` (a read-only token) may read; `OUTSIDER` says it belongs to
org `elsewhere`, where the server refuses every write (403); anything else is 401.
Repos of other orgs are 403 to create or write. Private repos are invisible (404) without a token that can read
them. The uploads use the legacy LFS protocol: run the client with HF_HUB_DISABLE_XET=1.

Endpoints:
    GET  /api/whoami-v2
    GET  /api/agent-harnesses                         (huggingface_hub's user-agent registry; empty)
    POST /api/repos/create
    POST /api/validate-yaml
    GET  /api/datasets/{repo}  and  /api/datasets/{repo}/revision/{rev}
    GET  /api/datasets/{repo}/auth-check[/write]
    GET  /api/datasets/{repo}/refs
    POST /api/datasets/{repo}/preupload/{rev}         parquet and binary files are answered `lfs`
    POST /datasets/{repo}.git/info/lfs/objects/batch  -> PUT /lfs-upload/{oid}, POST /lfs-verify/{oid}
    POST /api/datasets/{repo}/commit/{rev}            ndjson: header, file, lfsFile, deletedFile, deletedFolder
    POST /api/datasets/{repo}/tag/{rev}
    GET  /api/datasets/{repo}/tree/{rev}[/{path}]     (?recursive=true)
    POST /api/datasets/{repo}/paths-info/{rev}
    HEAD/GET /datasets/{repo}/resolve/{rev}/{path}    (Range requests answered 206)
Every request is logged in `server.log` as (method, path, status). `add_repo` serves given files without a push.
"""
from __future__ import annotations

import base64
import hashlib
import json
import re
import threading
import time
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlsplit

WRITER = "hf_test_writer"
READER = "hf_test_reader"
OUTSIDER = "hf_test_outsider"  # a write token whose org the server never lets write
ORG = "grip-test"
USERS = {
    WRITER: {"name": "grip-writer", "role": "write"},
    READER: {"name": "grip-reader", "role": "read"},
    OUTSIDER: {"name": "outsider", "role": "write", "org": "elsewhere"},
}


def git_sha1(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


@dataclass
class Blob:
    data: bytes
    lfs: bool

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()

    def entry(self, path: str) -> dict:
        e = {"type": "file", "oid": git_sha1(self.data), "size": len(self.data), "path": path}
        if self.lfs:
            e["lfs"] = {"oid": self.sha256, "size": len(self.data), "pointerSize": 134}
        return e


@dataclass
class Repo:
    repo_id: str
    private: bool
    commits: dict = field(default_factory=dict)   # oid -> {path: Blob}
    branches: dict = field(default_factory=dict)  # name -> oid
    tags: dict = field(default_factory=dict)      # name -> oid
    order: list = field(default_factory=list)     # commit oids, oldest first

    def resolve(self, rev: str) -> str | None:
        rev = unquote(rev)
        if rev in self.branches:
            return self.branches[rev]
        if rev in self.tags:
            return self.tags[rev]
        return rev if rev in self.commits else None

    def commit(self, files: dict) -> str:
        oid = hashlib.sha1(uuid.uuid4().bytes).hexdigest()
        self.commits[oid] = files
        self.order.append(oid)
        return oid


class HubState:
    def __init__(self):
        self.repos: dict[str, Repo] = {}
        self.lfs: dict[str, bytes] = {}
        self.log: list[tuple[str, str, int]] = []
        self.lock = threading.Lock()


class HubError(Exception):
    def __init__(self, status: int, message: str, code: str | None = None):
        super().__init__(message)
        self.status, self.message, self.code = status, message, code


def _not_found_repo():
    return HubError(404, "Repository not found", "RepoNotFound")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    state: HubState = None  # set by HubServer
    base: str = ""

    def log_message(self, *a):  # quiet
        pass

    # --- plumbing --------------------------------------------------------------------------------------------

    def _body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            out = bytearray()
            while True:
                size = int(self.rfile.readline().strip().split(b";")[0], 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return bytes(out)
                out += self.rfile.read(size)
                self.rfile.readline()
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    def _send(self, status: int, body: bytes = b"", ctype: str = "application/json", headers: dict | None = None,
              head: bool = False):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if not head:
            self.wfile.write(body)
        self.state.log.append((self.command, self.path, status))

    def _json(self, obj, status: int = 200, headers: dict | None = None):
        self._send(status, json.dumps(obj).encode(), headers=headers)

    def _error(self, e: HubError, head: bool = False):
        h = {"X-Error-Message": e.message}
        if e.code:
            h["X-Error-Code"] = e.code
        self._send(e.status, json.dumps({"error": e.message}).encode(), headers=h, head=head)

    def _user(self, required: bool = True):
        auth = self.headers.get("Authorization", "")
        token = auth[7:] if auth.startswith("Bearer ") else None
        if token is None:
            if required:
                raise HubError(401, "Invalid credentials in Authorization header")
            return None
        if token not in USERS:
            raise HubError(401, "Invalid credentials in Authorization header")
        return USERS[token]

    def _repo(self, repo_id: str, write: bool = False) -> Repo:
        user = self._user(required=write)
        repo = self.state.repos.get(repo_id)
        can_read = repo is not None and (not repo.private or (user is not None and repo_id.startswith(ORG + "/")))
        if not can_read:
            raise _not_found_repo()
        if write and (user["role"] != "write" or not repo_id.startswith(ORG + "/")):
            raise HubError(403, f"You don't have write access to {repo_id}")
        return repo

    def _rev(self, repo: Repo, rev: str) -> str:
        oid = repo.resolve(rev)
        if oid is None:
            raise HubError(404, f"Invalid rev id: {unquote(rev)}", "RevisionNotFound")
        return oid

    # --- dispatch --------------------------------------------------------------------------------------------

    ROUTES = [
        ("GET", r"/api/whoami-v2", "whoami"),
        ("GET", r"/api/agent-harnesses", "agent_harnesses"),
        ("POST", r"/api/repos/create", "create"),
        ("POST", r"/api/validate-yaml", "validate_yaml"),
        ("GET", r"/api/datasets/(?P<repo>[^/]+/[^/]+)/auth-check(?P<write>/write)?", "auth_check"),
        ("GET", r"/api/datasets/(?P<repo>[^/]+/[^/]+)/refs", "refs"),
        ("POST", r"/api/datasets/(?P<repo>[^/]+/[^/]+)/preupload/(?P<rev>[^/]+)", "preupload"),
        ("POST", r"/api/datasets/(?P<repo>[^/]+/[^/]+)/commit/(?P<rev>[^/]+)", "commit"),
        ("POST", r"/api/datasets/(?P<repo>[^/]+/[^/]+)/tag/(?P<rev>[^/]+)", "tag"),
        ("GET", r"/api/datasets/(?P<repo>[^/]+/[^/]+)/tree/(?P<rev>[^/]+)(?:/(?P<path>.*))?", "tree"),
        ("POST", r"/api/datasets/(?P<repo>[^/]+/[^/]+)/paths-info/(?P<rev>[^/]+)", "paths_info"),
        ("GET", r"/api/datasets/(?P<repo>[^/]+/[^/]+)(?:/revision/(?P<rev>[^/]+))?", "info"),
        ("POST", r"/datasets/(?P<repo>[^/]+/[^/]+)\.git/info/lfs/objects/batch", "lfs_batch"),
        ("PUT", r"/lfs-upload/(?P<oid>[0-9a-f]{64})", "lfs_put"),
        ("POST", r"/lfs-verify/(?P<oid>[0-9a-f]{64})", "lfs_verify"),
        ("GET", r"/datasets/(?P<repo>[^/]+/[^/]+)/resolve/(?P<rev>[^/]+)/(?P<path>.+)", "resolve"),
        ("HEAD", r"/datasets/(?P<repo>[^/]+/[^/]+)/resolve/(?P<rev>[^/]+)/(?P<path>.+)", "resolve"),
    ]

    def _dispatch(self):
        url = urlsplit(self.path)
        self.query = parse_qs(url.query)
        path = url.path
        head = self.command == "HEAD"
        for method, pattern, name in self.ROUTES:
            m = re.fullmatch(pattern, path)
            if method == self.command and m:
                try:
                    with self.state.lock:
                        return getattr(self, "do_" + name)(**{k: v for k, v in m.groupdict().items()})
                except HubError as e:
                    return self._error(e, head=head)
        self._body()
        self._error(HubError(404, f"no such endpoint in the test server: {self.command} {path}"), head=head)

    do_GET = do_POST = do_PUT = do_HEAD = do_DELETE = lambda self: self._dispatch()

    # --- endpoints -------------------------------------------------------------------------------------------

    def do_whoami(self):
        u = self._user()
        self._json({"type": "user", "name": u["name"], "fullname": u["name"],
                    "orgs": [{"type": "org", "name": u.get("org", ORG), "roleInOrg": u["role"]}],
                    "auth": {"type": "access_token", "accessToken": {"displayName": "test", "role": u["role"]}}})

    def do_agent_harnesses(self):  # huggingface_hub's user-agent detection asks for this registry
        self._json({"standardEnvVars": [], "harnesses": {}})

    def do_create(self):
        u = self._user()
        body = json.loads(self._body() or b"{}")
        ns = body.get("organization") or u["name"]
        repo_id = f"{ns}/{body['name']}"
        if body.get("type") != "dataset":
            raise HubError(400, "this test server only holds datasets")
        if ns != ORG or u["role"] != "write":
            raise HubError(403, f"You don't have the rights to create a dataset under the namespace {ns!r}")
        if repo_id in self.state.repos:  # the Hub's 409 carries the url, and huggingface_hub reads it
            return self._json({"error": "You already created this dataset repo",
                               "url": f"{self.base}/datasets/{repo_id}"}, status=409,
                              headers={"X-Error-Message": "You already created this dataset repo"})
        private = body.get("private", body.get("visibility") == "private")
        repo = Repo(repo_id, bool(private))
        repo.branches["main"] = repo.commit({".gitattributes": Blob(b"*.parquet filter=lfs diff=lfs merge=lfs -text\n",
                                                                    False)})
        self.state.repos[repo_id] = repo
        self._json({"url": f"{self.base}/datasets/{repo_id}", "name": repo_id})

    def do_validate_yaml(self):
        self._user()
        body = json.loads(self._body() or b"{}")
        content = body.get("content", "")
        errors = [] if content.startswith("---\n") and "\n---\n" in content[4:] else [
            {"message": "no YAML metadata block"}]
        self._json({"errors": errors, "warnings": []}, status=400 if errors else 200)

    def do_info(self, repo, rev=None):
        r = self._repo(repo)
        oid = self._rev(r, rev or "main")
        files = r.commits[oid]
        self._json({"_id": repo, "id": repo, "author": repo.split("/")[0], "sha": oid, "private": r.private,
                    "disabled": False, "gated": False, "downloads": 0, "likes": 0, "tags": [],
                    "lastModified": "2025-01-01T00:00:00.000Z", "createdAt": "2025-01-01T00:00:00.000Z",
                    "siblings": [{"rfilename": p} for p in sorted(files)], "cardData": {}})

    def do_auth_check(self, repo, write=None):
        self._repo(repo, write=bool(write))
        self._json({"ok": True})

    def do_refs(self, repo):
        r = self._repo(repo)
        self._json({"branches": [{"name": b, "ref": f"refs/heads/{b}", "targetCommit": o}
                                 for b, o in r.branches.items()],
                    "tags": [{"name": t, "ref": f"refs/tags/{t}", "targetCommit": o} for t, o in r.tags.items()],
                    "converts": []})

    def do_preupload(self, repo, rev):
        r = self._repo(repo, write=True)
        oid = self._rev(r, rev)
        body = json.loads(self._body())
        out = []
        for f in body["files"]:
            sample = base64.b64decode(f["sample"])
            lfs = f["path"].endswith(".parquet") or b"\0" in sample or f["size"] > 10 * 2**20
            old = r.commits[oid].get(f["path"])
            remote = None if old is None else (old.sha256 if old.lfs else git_sha1(old.data))
            out.append({"path": f["path"], "uploadMode": "lfs" if lfs else "regular", "shouldIgnore": False,
                        "oid": remote})
        self._json({"files": out})

    def do_lfs_batch(self, repo):
        self._repo(repo, write=True)
        body = json.loads(self._body())
        objs = []
        for o in body["objects"]:
            e = {"oid": o["oid"], "size": o["size"], "authenticated": True}
            if o["oid"] not in self.state.lfs:
                e["actions"] = {"upload": {"href": f"{self.base}/lfs-upload/{o['oid']}", "header": {}},
                                "verify": {"href": f"{self.base}/lfs-verify/{o['oid']}", "header": {}}}
            objs.append(e)
        self._send(200, json.dumps({"transfer": "basic", "objects": objs}).encode(),
                   ctype="application/vnd.git-lfs+json")

    def do_lfs_put(self, oid):
        data = self._body()
        if hashlib.sha256(data).hexdigest() != oid:
            raise HubError(400, "content does not match its oid")
        self.state.lfs[oid] = data
        self._send(200)

    def do_lfs_verify(self, oid):
        body = json.loads(self._body() or b"{}")
        if oid not in self.state.lfs or len(self.state.lfs[oid]) != body.get("size"):
            raise HubError(404, "object not uploaded")
        self._json({"ok": True})

    def do_commit(self, repo, rev):
        r = self._repo(repo, write=True)
        branch = unquote(rev)
        if branch not in r.branches:
            raise HubError(404, f"Invalid rev id: {branch}", "RevisionNotFound")
        files = dict(r.commits[r.branches[branch]])
        summary = ""
        for line in self._body().splitlines():
            if not line.strip():
                continue
            item = json.loads(line)
            key, v = item["key"], item["value"]
            if key == "header":
                summary = v.get("summary", "")
            elif key == "file":
                files[v["path"]] = Blob(base64.b64decode(v["content"]), False)
            elif key == "lfsFile":
                if v["oid"] not in self.state.lfs:
                    raise HubError(400, f"LFS object {v['oid']} of {v['path']} was never uploaded")
                files[v["path"]] = Blob(self.state.lfs[v["oid"]], True)
            elif key == "deletedFile":
                if v["path"] not in files:
                    raise HubError(404, "A file with this name doesn't exist", "EntryNotFound")
                del files[v["path"]]
            elif key == "deletedFolder":
                prefix = v["path"].rstrip("/") + "/"
                files = {p: b for p, b in files.items() if not p.startswith(prefix)}
            else:
                raise HubError(400, f"unknown commit operation {key}")
        if not summary:
            raise HubError(400, "commit without a summary")
        oid = r.commit(files)
        r.branches[branch] = oid
        self._json({"success": True, "commitOid": oid, "commitUrl": f"{self.base}/datasets/{repo}/commit/{oid}",
                    "pullRequestUrl": None})

    def do_tag(self, repo, rev):
        r = self._repo(repo, write=True)
        oid = self._rev(r, rev)
        body = json.loads(self._body() or b"{}")
        tag = body.get("tag")
        if not tag:
            raise HubError(400, "no tag name")
        if tag in r.tags or tag in r.branches:
            raise HubError(409, f"Tag {tag} already exists")
        r.tags[tag] = oid
        self._json({"name": tag, "ref": f"refs/tags/{tag}", "targetCommit": oid})

    @staticmethod
    def _entries(files: dict, prefix: str, recursive: bool) -> list[dict]:
        prefix = prefix.strip("/")
        pre = prefix + "/" if prefix else ""
        out, dirs = [], set()
        for p in sorted(files):
            if not p.startswith(pre):
                continue
            rest = p[len(pre):]
            parts = rest.split("/")
            for k in range(1, len(parts) if recursive else min(2, len(parts))):
                dirs.add(pre + "/".join(parts[:k]))
            if recursive or len(parts) == 1:
                out.append(files[p].entry(p))
        out += [{"type": "directory", "oid": hashlib.sha1(d.encode()).hexdigest(), "size": 0, "path": d}
                for d in sorted(dirs)]
        return sorted(out, key=lambda e: e["path"])

    def do_tree(self, repo, rev, path=None):
        r = self._repo(repo)
        files = r.commits[self._rev(r, rev)]
        path = unquote(path or "").strip("/")
        if path and path in files:
            raise HubError(400, f"{path} is a file, not a folder")
        if path and not any(p.startswith(path + "/") for p in files):
            raise HubError(404, f"{path} does not exist", "EntryNotFound")
        recursive = self.query.get("recursive", ["false"])[0].lower() in ("1", "true")
        self._json(self._entries(files, path, recursive))

    def do_paths_info(self, repo, rev):
        r = self._repo(repo)
        files = r.commits[self._rev(r, rev)]
        raw = self._body()
        ctype = self.headers.get("Content-Type", "")
        if "json" in ctype:
            paths = json.loads(raw).get("paths", [])
        else:
            paths = parse_qs(raw.decode()).get("paths", [])
        out = []
        for p in paths:
            p = p.strip("/")
            if p in files:
                out.append(files[p].entry(p))
            elif any(f.startswith(p + "/") for f in files):
                out.append({"type": "directory", "oid": hashlib.sha1(p.encode()).hexdigest(), "size": 0,
                            "path": p})
        self._json(out)

    def do_resolve(self, repo, rev, path):
        head = self.command == "HEAD"
        r = self._repo(repo)
        oid = self._rev(r, rev)
        path = unquote(path)
        blob = r.commits[oid].get(path)
        if blob is None:
            raise HubError(404, f"Entry not found: {path}", "EntryNotFound")
        etag = f'"{blob.sha256 if blob.lfs else git_sha1(blob.data)}"'
        headers = {"X-Repo-Commit": oid, "ETag": etag, "Accept-Ranges": "bytes"}
        if blob.lfs:
            headers["X-Linked-Etag"] = etag
            headers["X-Linked-Size"] = str(len(blob.data))
        data = blob.data
        rng = self.headers.get("Range")
        if rng and not head:
            m = re.fullmatch(r"bytes=(\d*)-(\d*)", rng.strip())
            if not m:
                raise HubError(416, "bad range")
            a, b = m.group(1), m.group(2)
            if a == "":
                start, stop = max(0, len(data) - int(b)), len(data)
            else:
                start, stop = int(a), (int(b) + 1 if b else len(data))
            stop = min(stop, len(data))
            if start >= len(data) and len(data) > 0:
                raise HubError(416, "range not satisfiable")
            headers["Content-Range"] = f"bytes {start}-{max(start, stop - 1)}/{len(data)}"
            return self._send(206, data[start:stop], ctype="application/octet-stream", headers=headers)
        self._send(200, data, ctype="application/octet-stream", headers=headers, head=head)


class HubServer:
    """`with HubServer() as hub:` serves on 127.0.0.1:<free port>; `hub.url` is the HF_ENDPOINT to use."""

    def __init__(self):
        self.state = HubState()
        handler = type("BoundHandler", (Handler,), {"state": self.state})
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        handler.base = self.url
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def log(self):
        return self.state.log

    def add_repo(self, repo_id: str, files: dict, private: bool = False) -> Repo:
        """A dataset repo whose `main` holds `files` ({path: bytes}; parquet files stored as LFS), as a push would
        leave it: lets a test serve an export, or a deliberately broken one, without pushing it first."""
        repo = Repo(repo_id, private)
        blobs = {".gitattributes": Blob(b"*.parquet filter=lfs diff=lfs merge=lfs -text\n", False)}
        blobs.update({p: Blob(data, p.endswith(".parquet")) for p, data in files.items()})
        repo.branches["main"] = repo.commit(blobs)
        self.state.repos[repo_id] = repo
        return repo

    def get_paths(self, since: int = 0) -> list[str]:
        """The paths of the files fetched (GET .../resolve/...) since log entry `since`."""
        return [unquote(m.group(1)) for method, p, _ in self.log[since:] if method == "GET"
                for m in [re.search(r"/resolve/[^/]+/(.+)$", urlsplit(p).path)] if m]

    def start(self) -> "HubServer":
        self.thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


if __name__ == "__main__":  # a manual run: `python tests/hub_server.py` then HF_ENDPOINT=<url> ...
    with HubServer() as hub:
        print(hub.url, flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass
