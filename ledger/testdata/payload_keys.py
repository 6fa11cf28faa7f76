#!/usr/bin/env python3
"""Writes payload_keys.json (package ledger) and ../../operator/testdata/intent_keys.json.

The keys are computed here, independently of the Go code: the canonical JSON
of {"action_type", "actor", "target_url", "payload"} with sorted keys, no
spaces and UTF-8 strings, then sha256. The payload is ledger.Payload as the
operator writes it: "intent" always, "text", "parent" and "thread" when not
empty, "position" for a thread part (0 included), "media" when the action
attaches any: a list of {"sha256", "type", "alt"} in order, alt always
written (an empty alt included), "fields" when the action sets entry
fields: an object of names to a string (a text) or a list of strings.
"""
import hashlib, json, os

def payload(intent, text="", parent="", thread="", position=None, media=None, fields=None):
    p = {"intent": intent}
    if text: p["text"] = text
    if parent: p["parent"] = parent
    if thread: p["thread"] = thread
    if position is not None: p["position"] = position
    if media: p["media"] = [{"sha256": hashlib.sha256(data).hexdigest(), "type": t, "alt": alt} for data, t, alt in media]
    if fields: p["fields"] = fields
    return p

# The media files of the vectors: their bytes are hashed here, and the
# operator's test writes the same bytes to a media directory.
PNG = bytes.fromhex("89504e470d0a1a0a") + b"browserop test image one"
JPEG = bytes.fromhex("ffd8ffe0") + b"browserop test image two"

def canon(v):
    return json.dumps(v, sort_keys=True, separators=(",", ":"), ensure_ascii=False)

def key(action_type, actor, target_url, p):
    doc = {"action_type": action_type, "actor": actor, "target_url": target_url, "payload": p}
    return hashlib.sha256(canon(doc).encode("utf-8")).hexdigest()

P = "https://demo.example/p/3"
# (name, request, expected action): the request as a calendar entry or
# agent intent names it; part and parent for a thread's part.
cases = [
    ("post", dict(origin="calendar:launch", type="post", actor="alice", text="Hello, world"),
     dict(type="post", format="post_text", target_url="", payload=payload("calendar:launch", text="Hello, world"))),
    ("post with html and unicode", dict(origin="task:int_01J9ZX", type="post", actor="alice", text="café <b>&</b> ☕ 日本語 😀"),
     dict(type="post", format="post_text", target_url="", payload=payload("task:int_01J9ZX", text="café <b>&</b> ☕ 日本語 😀"))),
    ("reply", dict(origin="calendar:answer", type="reply", actor="alice", target=P, text="thanks!"),
     dict(type="reply", format="reply", target_url=P, payload=payload("calendar:answer", text="thanks!", parent=P))),
    ("like", dict(origin="planner:0123456789abcdef01234567", type="like", actor="alice", target=P),
     dict(type="like", format="like", target_url=P, payload=payload("planner:0123456789abcdef01234567"))),
    ("follow", dict(origin="calendar:f", type="follow", actor="bob", target="https://demo.example/u/carol"),
     dict(type="follow", format="follow", target_url="https://demo.example/u/carol", payload=payload("calendar:f"))),
    ("thread first part", dict(origin="calendar:story", type="thread", actor="alice", parts=["one", "two"], part=0, parent=""),
     dict(type="thread_part", format="thread", target_url="", payload=payload("calendar:story", text="one", thread="calendar:story", position=0))),
    ("thread second part", dict(origin="calendar:story", type="thread", actor="alice", parts=["one", "two"], part=1, parent="https://demo.example/p/10"),
     dict(type="thread_part", format="", target_url="", payload=payload("calendar:story", text="two", parent="https://demo.example/p/10", thread="calendar:story", position=1))),
    ("thread under a target", dict(origin="task:int_02", type="thread", actor="alice", target=P, parts=["a", "b"], part=0, parent=P),
     dict(type="thread_part", format="thread", target_url="", payload=payload("task:int_02", text="a", parent=P, thread="task:int_02", position=0))),
    ("post with an image", dict(origin="calendar:pic", type="post", actor="alice", text="Look",
                                media=[dict(file="one.png", data=PNG.hex(), alt="A red square")]),
     dict(type="post", format="post_image", target_url="", payload=payload("calendar:pic", text="Look", media=[(PNG, "png", "A red square")]))),
    ("post with two images, one without alt", dict(origin="calendar:pics", type="post", actor="alice", text="Two",
                                media=[dict(file="b.jpg", data=JPEG.hex(), alt=""), dict(file="a.png", data=PNG.hex(), alt="café ☕")]),
     dict(type="post", format="post_image", target_url="", payload=payload("calendar:pics", text="Two", media=[(JPEG, "jpeg", ""), (PNG, "png", "café ☕")]))),
    ("thread part with an image", dict(origin="calendar:tour", type="thread", actor="alice", parts=["one", "two"], part=1, parent="https://demo.example/p/10",
                                media=[dict(file="two.jpg", data=JPEG.hex(), alt="The second step")]),
     dict(type="thread_part", format="", target_url="", payload=payload("calendar:tour", text="two", parent="https://demo.example/p/10", thread="calendar:tour", position=1, media=[(JPEG, "jpeg", "The second step")]))),
    ("reply with an image", dict(origin="task:int_03", type="reply", actor="bob", target=P, text="this",
                                media=[dict(file="one.png", data=PNG.hex(), alt="A red square")]),
     dict(type="reply", format="reply", target_url=P, payload=payload("task:int_03", text="this", parent=P, media=[(PNG, "png", "A red square")]))),
    ("post with entry fields", dict(origin="calendar:news", type="post", actor="alice", text="Release notes",
                                fields={"tags": ["go", "café ☕"], "category": "News"}),
     dict(type="post", format="post_text", target_url="", payload=payload("calendar:news", text="Release notes", fields={"category": "News", "tags": ["go", "café ☕"]}))),
    ("reply with a one-item list field", dict(origin="task:int_04", type="reply", actor="bob", target=P, text="agreed",
                                fields={"labels": ["x"]}),
     dict(type="reply", format="reply", target_url=P, payload=payload("task:int_04", text="agreed", parent=P, fields={"labels": ["x"]}))),
]

here = os.path.dirname(os.path.abspath(__file__))
ledger_vectors, operator_vectors = [], []
for name, req, want in cases:
    p = want["payload"]
    k = key(want["type"], req["actor"], want["target_url"], p)
    fields = {"Intent": p["intent"], "Text": p.get("text", ""), "Parent": p.get("parent", ""),
              "Thread": p.get("thread", ""), "Position": p.get("position"), "Media": p.get("media"),
              "Fields": p.get("fields")}
    ledger_vectors.append({"name": name, "action_type": want["type"], "actor": req["actor"],
                           "target_url": want["target_url"], "fields": fields, "payload": canon(p), "key": k})
    operator_vectors.append({"name": name, "request": req, "type": want["type"], "format": want["format"],
                             "target_url": want["target_url"], "payload": canon(p), "key": k})
with open(os.path.join(here, "payload_keys.json"), "w", encoding="utf-8") as f:
    json.dump(ledger_vectors, f, indent=1, ensure_ascii=False); f.write("\n")
with open(os.path.join(here, "..", "..", "operator", "testdata", "intent_keys.json"), "w", encoding="utf-8") as f:
    json.dump(operator_vectors, f, indent=1, ensure_ascii=False); f.write("\n")
