// akgentic console: a page over the REST API (/api/) and the team's event stream.
// Every piece of content is written with textContent: nothing from a team is ever
// parsed as HTML.
"use strict";

// ------------------------------------------------------------------ helpers

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "text") node.textContent = String(value);
    else if (key === "on") for (const [ev, fn] of Object.entries(value)) node.addEventListener(ev, fn);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children) {
    if (child === null || child === undefined) continue;
    node.append(typeof child === "string" ? document.createTextNode(child) : child);
  }
  return node;
}

function flash(message, isError) {
  const box = document.getElementById("flash");
  box.textContent = message || "";
  box.className = isError ? "error" : "";
}

async function api(method, path, body) {
  const headers = { "Accept": "application/json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const response = await fetch(path, {
    method, headers, body: body === undefined ? undefined : JSON.stringify(body),
    credentials: "same-origin",
  });
  const data = await response.json().catch(() => ({}));
  if (!response.ok) {
    let detail = typeof data.detail === "string" ? data.detail : JSON.stringify(data.detail);
    if (Array.isArray(data.problems) && data.problems.length) detail += ": " + data.problems.join("; ");
    throw new Error(detail || response.statusText);
  }
  return data;
}

function attempt(action) {
  return async (...args) => {
    try {
      flash("");
      await action(...args);
    } catch (error) {
      flash(error.message, true);
    }
  };
}

function time(text) {
  return text ? text.replace("T", " ").slice(0, 19) : "";
}

// ------------------------------------------------------------------ team list

async function showList() {
  const view = document.getElementById("view");
  view.replaceChildren();
  const search = el("input", { type: "search", placeholder: "search", "data-testid": "search" });
  const status = el("select", { "data-testid": "status-filter" },
    el("option", { value: "", text: "any status" }),
    el("option", { value: "running", text: "running" }),
    el("option", { value: "passivated", text: "passivated" }),
    el("option", { value: "broken", text: "broken" }),
    el("option", { value: "stopped", text: "stopped" }));
  const meta = el("input", { placeholder: "metadata KEY=VALUE, ...", "data-testid": "metadata-filter" });
  const table = el("tbody", { "data-testid": "teams" });
  const examples = el("select", { "data-testid": "example" });
  const file = el("input", { type: "file", accept: ".yaml,.yml", "data-testid": "card-file" });

  const refresh = attempt(async () => {
    const params = new URLSearchParams();
    if (search.value) params.set("q", search.value);
    if (status.value) params.set("status", status.value);
    for (const item of meta.value.split(",").map((s) => s.trim()).filter(Boolean)) params.append("metadata", item);
    const teams = await api("GET", "/api/teams?" + params);
    table.replaceChildren(...teams.map(teamRow));
    if (!teams.length) table.append(el("tr", {}, el("td", { colspan: 7, text: "no team" })));
  });

  function teamRow(team) {
    const actions = el("td", {});
    // A passivated team wakes on its next message; stopped and broken ones want a resume.
    if (team.status === "running" || team.status === "passivated") actions.append(button("stop", () => lifecycle(team, "stop")));
    if (team.status === "stopped" || team.status === "broken") actions.append(button("resume", () => lifecycle(team, "resume")));
    if (team.status !== "running") actions.append(button("delete", () => remove(team)));
    return el("tr", { "data-team": team.team_id },
      el("td", {}, el("a", { href: "#/team/" + team.team_id, text: team.name || "(unnamed)" })),
      el("td", { class: "mono", text: team.team_id }),
      el("td", { class: "status-" + team.status, title: team.reason || "", text: team.status + (team.running_here ? " here" : "") }),
      el("td", { text: time(team.updated_at) }),
      el("td", { text: team.metadata_indexes.map((e) => e.replace("|", "=")).join(", ") }),
      el("td", { class: "quiet", "data-testid": "team-lineage", text: team.lineage || "" }),
      actions);
  }

  const lifecycle = attempt(async (team, verb) => {
    flash(verb + "ping " + team.team_id + "…");
    await api("POST", `/api/teams/${team.team_id}/${verb}`);
    flash("");
    await refresh();
  });

  const remove = attempt(async (team) => {
    if (!window.confirm(`Delete team ${team.name || ""} ${team.team_id}? Its whole history is removed.`)) return;
    await api("DELETE", `/api/teams/${team.team_id}?confirm=${team.team_id}`);
    await refresh();
  });

  const createFromExample = attempt(async () => {
    if (!examples.value) throw new Error("no example selected");
    const team = await api("POST", "/api/teams", { example: examples.value });
    location.hash = "#/team/" + team.team_id;
  });

  const createFromFile = attempt(async () => {
    const chosen = file.files[0];
    if (!chosen) throw new Error("choose a card file first");
    const team = await api("POST", "/api/teams", { card: await chosen.text(), source: chosen.name });
    location.hash = "#/team/" + team.team_id;
  });

  view.append(
    el("section", { class: "toolbar" }, search, status, meta, button("filter", refresh, "filter")),
    el("table", { class: "teams" },
      el("thead", {}, el("tr", {}, ...["name", "id", "status", "updated", "metadata", "lineage", ""].map((h) => el("th", { text: h })))),
      table),
    el("section", { class: "create" },
      el("h2", { text: "Create a team" }),
      el("div", {}, examples, button("create from example", createFromExample, "create-example")),
      el("div", {}, file, button("create from file", createFromFile, "create-file"))));
  search.addEventListener("keydown", (e) => { if (e.key === "Enter") refresh(); });
  await refresh();
  try {
    const found = await api("GET", "/api/examples");
    examples.replaceChildren(...found.map((x) => el("option", { value: x.name, text: x.name })));
  } catch (error) {
    flash(error.message, true);
  }
}

function button(label, action, testid) {
  return el("button", { type: "button", text: label, "data-testid": testid || label, on: { click: action } });
}

// ------------------------------------------------------------------ team page

let current = null; // the open team page (closed when navigating away)

async function showTeam(teamId) {
  const view = document.getElementById("view");
  view.replaceChildren();
  const page = new TeamPage(teamId, view);
  current = page;
  await page.start();
}

class TeamPage {
  constructor(teamId, root) {
    this.id = teamId;
    this.root = root;
    this.seen = new Set();
    this.openPanes = new Set();
    this.oldest = null;
    this.timer = null;
    this.header = el("section", { class: "team-header" });
    this.lineage = el("section", { class: "lineage", "data-testid": "lineage" });
    this.older = button("load older messages", attempt(() => this.loadOlder()), "older");
    this.conversation = el("ol", { class: "conversation", "data-testid": "conversation" });
    this.conversation.addEventListener("scroll", () => {
      if (this.conversation.scrollTop < 40 && this.oldest !== null) attempt(() => this.loadOlder())();
    });
    this.input = el("input", { list: "completions", placeholder: "message, @Member message or /command", "data-testid": "message" });
    this.completions = el("datalist", { id: "completions" });
    this.roster = el("tbody", { "data-testid": "roster" });
    this.questions = el("div", { class: "questions", "data-testid": "questions" });
    this.panes = el("div", { class: "panes", "data-testid": "panes" });
    this.inspector = el("ol", { class: "inspector", "data-testid": "inspector" });
    this.detail = el("pre", { class: "detail", "data-testid": "event-json" });
    this.filterType = el("input", { placeholder: "type", "data-testid": "inspect-type" });
    this.filterMember = el("input", { placeholder: "member", "data-testid": "inspect-member" });
    this.figures = {};
    const figure = (name, caption) => {
      const body = el("div", { class: "picture-body", "data-testid": "picture-" + name });
      this.figures[name] = body;
      return el("figure", { class: "picture-box", "data-picture": name }, el("figcaption", { text: caption }), body);
    };
    this.pictures = el("section", { class: "pictures", "data-testid": "pictures" },
      figure("graph", "Who talks to whom"),
      figure("usage", "Tokens and cost over time"),
      figure("timeline", "Turns and tool calls"));
    this.pictureTicket = 0;
    const form = el("form", { class: "send", on: { submit: (e) => { e.preventDefault(); this.send(); } } },
      this.input, this.completions, el("button", { type: "submit", text: "send", "data-testid": "send" }));
    root.append(
      this.header,
      this.lineage,
      el("div", { class: "columns" },
        el("section", { class: "talk" }, el("h2", { text: "Conversation" }), this.older, this.conversation, form),
        el("aside", {},
          el("h2", { text: "Questions for you" }), this.questions,
          el("h2", { text: "Members" }),
          el("table", {}, el("thead", {}, el("tr", {}, ...["member", "role", "model", "state", "tokens in/out"].map((h) => el("th", { text: h })))), this.roster),
          el("h2", {}, "Tools ", button("refresh", attempt(() => this.loadPanes()), "panes-refresh")), this.panes)),
      el("h2", { text: "Pictures" }), this.pictures,
      el("section", { class: "inspect" },
        el("h2", { text: "Event inspector" }),
        el("div", { class: "toolbar" }, this.filterType, this.filterMember, button("inspect", attempt(() => this.loadInspector()), "inspect")),
        el("div", { class: "columns" }, this.inspector, this.detail)));
  }

  closed() { return current !== this; }

  async start() {
    this.connect();
    await attempt(async () => {
      await this.loadHeader();
      await this.loadHistory();
      await this.refreshSide();
      await this.loadPanes();
      await this.loadPictures();
    })();
  }

  connect() {
    // The console's cookie (set when the printed URL was opened) authenticates the stream.
    const url = `/api/teams/${this.id}/stream`;
    this.stream = new EventSource(url);
    this.stream.onmessage = (event) => {
      if (this.closed()) { this.stream.close(); return; }
      const row = JSON.parse(event.data);
      if (row.kind === "status") { this.loadHeader(); this.scheduleSide(); this.schedulePictures(); return; }
      if (row.kind === "reset") { this.conversation.replaceChildren(); this.seen.clear(); this.loadHistory(); this.schedulePictures(); return; }
      if (row.kind === "message" || PICTURED.has(row.type) || PICTURED.has(row.message_type)) this.schedulePictures();
      this.addInspected(row, false);
      if (row.message_type === "ToolStateEvent" || row.message_type === "WorkspaceAttached") this.schedulePanes();
      if (row.kind === "message") { this.addMessage(row, false); this.scheduleSide(); }
      else if (row.message_type === "TurnFailed") this.addMessage({ ...row, recipient: "turn failed" }, false);
      else if (row.type === "StartMessage" || row.type === "ReceivedMessage" || row.type === "ProcessedMessage") this.scheduleSide();
    };
  }

  // Tool state changed: redraw the panes once things settle (one request per burst).
  schedulePanes() {
    if (this.paneTimer) return;
    this.paneTimer = setTimeout(() => { this.paneTimer = null; if (!this.closed()) attempt(() => this.loadPanes())(); }, 500);
  }

  // Something a picture shows happened (a hire, a message, a turn, a tool call, a
  // model response): redraw the pictures once the burst settles.
  schedulePictures() {
    if (this.pictureTimer) return;
    this.pictureTimer = setTimeout(() => { this.pictureTimer = null; if (!this.closed()) attempt(() => this.loadPictures())(); }, 400);
  }

  async loadPictures() {
    const ticket = ++this.pictureTicket;
    const found = await api("GET", `/api/teams/${this.id}/pictures`);
    if (this.closed() || ticket !== this.pictureTicket) return; // a newer drawing is on its way
    for (const [name, body] of Object.entries(this.figures)) {
      body.replaceChildren(found[name] ? importPicture(found[name].svg) : el("p", { class: "quiet", text: "unavailable" }));
    }
  }

  scheduleSide() {
    if (this.timer) return;
    this.timer = setTimeout(() => { this.timer = null; if (!this.closed()) attempt(() => this.refreshSide())(); }, 300);
  }

  async loadHeader() {
    const team = await api("GET", `/api/teams/${this.id}`);
    this.team = team;
    const actions = [];
    if (team.status === "running" || team.status === "passivated") actions.push(button("stop", attempt(() => this.lifecycle("stop")), "team-stop"));
    if (team.status === "stopped" || team.status === "broken") actions.push(button("resume", attempt(() => this.lifecycle("resume")), "team-resume"));
    if (team.status !== "running") actions.push(button("delete", attempt(() => this.remove()), "team-delete"));
    this.header.replaceChildren(
      el("h1", { text: team.name || "(unnamed team)" }),
      el("span", { class: "mono", text: team.team_id }),
      el("span", { class: "status-" + team.status, "data-testid": "team-status", title: team.reason || "", text: team.status + (team.running_here ? " (here)" : "") + (team.reason ? ": " + team.reason : "") }),
      el("span", { text: team.event_count + " events" }),
      ...actions);
    const names = Object.entries(team.commands || {}).flatMap(([member, cmds]) => cmds.map((c) => `${member} /${c}`));
    this.commandHints = names;
    await this.loadLineage();
  }

  // Where the team comes from (its ancestors and fork points) and every fork of it.
  async loadLineage() {
    const family = await api("GET", `/api/teams/${this.id}/lineage`);
    if (this.closed()) return;
    const link = (id, name) => el("a", { href: "#/team/" + id, "data-team-link": id, text: `${name || "(unnamed)"} ${id.slice(0, 8)}` });
    const parts = [];
    if (family.ancestors.length) {
      parts.push(el("div", { "data-testid": "lineage-parents" }, "forked from ",
        ...family.ancestors.flatMap((a, i) => [i ? " ← " : "", link(a.team_id, a.name), ` at event ${a.forked_at}`])));
    }
    if (family.team.abandoned_for) {
      parts.push(el("div", { class: "quiet", "data-testid": "lineage-abandoned" }, "abandoned for ", link(family.team.abandoned_for, "")));
    }
    const tree = (forks) => el("ul", {}, ...forks.map((f) => el("li", { "data-testid": "lineage-fork" },
      link(f.team_id, f.name),
      ` ${f.rewind ? "rewound" : "forked"} at event ${f.at_sequence}, `,
      el("span", { class: "status-" + f.status, text: f.status }),
      f.abandoned_for ? " (abandoned)" : null,
      f.forks.length ? tree(f.forks) : null)));
    if (family.forks.length) parts.push(el("div", { "data-testid": "lineage-forks" }, "forks:", tree(family.forks)));
    this.lineage.replaceChildren(...parts);
  }

  // A new team made of this one's events up to ``seq``; its page opens (stopped).
  async forkAt(seq) {
    flash(`forking at event ${seq}…`);
    const made = await api("POST", `/api/teams/${this.id}/fork`, { at: seq });
    const cut = made.interrupted.length ? ` (${made.interrupted.length} call(s) in flight reported interrupted)` : "";
    location.hash = "#/team/" + made.team_id;
    flash(`forked at event ${seq}${cut}`);
  }

  async lifecycle(verb) {
    flash(verb + "ping…");
    await api("POST", `/api/teams/${this.id}/${verb}`);
    flash("");
    await this.loadHeader();
    await this.refreshSide();
  }

  async remove() {
    if (!window.confirm(`Delete team ${this.team.name || ""} ${this.id}? Its whole history is removed.`)) return;
    await api("DELETE", `/api/teams/${this.id}?confirm=${this.id}`);
    location.hash = "#/";
  }

  async loadHistory() {
    const page = await api("GET", `/api/teams/${this.id}/events?kind=message&limit=200`);
    this.oldest = page.next_before;
    for (const row of page.events) this.addMessage(row, false);
    this.older.hidden = this.oldest === null;
  }

  // Older pages are read on demand: the button, or scrolling to the top of the
  // conversation. The scroll position is kept so the reader's place does not jump.
  async loadOlder() {
    if (this.oldest === null || this.loadingOlder) return;
    this.loadingOlder = true;
    try {
      const page = await api("GET", `/api/teams/${this.id}/events?kind=message&limit=200&before=${this.oldest}`);
      const fromBottom = this.conversation.scrollHeight - this.conversation.scrollTop;
      this.oldest = page.next_before;
      for (const row of page.events.slice().reverse()) this.addMessage(row, true);
      this.conversation.scrollTop = this.conversation.scrollHeight - fromBottom;
      this.older.hidden = this.oldest === null;
    } finally {
      this.loadingOlder = false;
    }
  }

  addMessage(row, atTop) {
    if (this.seen.has(row.id)) return;
    this.seen.add(row.id);
    const item = el("li", { class: row.to_human ? "to-human" : "", "data-testid": "message-row" },
      el("div", { class: "meta" },
        el("span", { class: "who", text: `${row.sender || "?"} → ${row.recipient || "?"}` }),
        el("span", { class: "kind", text: [row.intent, row.message_type].filter(Boolean).join(" · ") }),
        el("time", { text: time(row.time) }),
        row.seq ? el("button", { type: "button", class: "fork-here", title: `a new team of events 1 to ${row.seq}`, text: "fork from here", "data-testid": "fork-here", on: { click: attempt(() => this.forkAt(row.seq)) } }) : null),
      el("div", { class: "content", "data-testid": "message-content", text: row.content === null ? "(" + row.message_type + ")" : row.content }));
    if (atTop) this.conversation.prepend(item);
    else {
      this.conversation.append(item);
      item.scrollIntoView({ block: "nearest" });
    }
  }

  async send() {
    const text = this.input.value;
    if (!text.trim()) return;
    await attempt(async () => {
      await api("POST", `/api/teams/${this.id}/messages`, { text });
      this.input.value = "";
    })();
  }

  async refreshSide() {
    const [members, questions] = await Promise.all([
      api("GET", `/api/teams/${this.id}/roster`),
      api("GET", `/api/teams/${this.id}/questions`),
    ]);
    if (this.closed()) return;
    this.roster.replaceChildren(...members.map((m) => el("tr", { "data-member": m.name },
      el("td", { text: m.name }), el("td", { text: m.role }), el("td", { text: m.model || "" }),
      el("td", { class: m.busy ? "busy" : "idle", text: m.human ? "human" : (m.busy ? "busy" : "idle") }),
      el("td", { text: `${m.input_tokens} / ${m.output_tokens}` }))));
    const hints = [...members.filter((m) => !m.human).map((m) => m.name + " "), ...(this.commandHints || [])];
    this.completions.replaceChildren(...hints.map((h) => el("option", { value: h })));
    // A question already shown keeps its node: an answer being typed survives the
    // refreshes that every message of the team triggers.
    const shown = this.questionNodes || new Map();
    this.questionNodes = new Map(questions.map((q) => [q.id, shown.get(q.id) || this.question(q)]));
    this.questions.replaceChildren(...this.questionNodes.values());
    if (!questions.length) this.questions.append(el("p", { class: "quiet", text: "none" }));
  }

  question(q) {
    const answer = el("textarea", { rows: 2, "data-testid": "answer-text" });
    // What was typed is kept by question id: a refresh that briefly lists the question
    // without its node (a resume, a reconnect) draws a new box holding the same draft.
    this.drafts = this.drafts || new Map();
    answer.value = this.drafts.get(q.id) || "";
    answer.addEventListener("input", () => this.drafts.set(q.id, answer.value));
    const submit = attempt(async () => {
      if (!answer.value.trim()) throw new Error("type an answer first");
      await api("POST", `/api/teams/${this.id}/questions/${q.id}/answer`, { text: answer.value });
      this.drafts.delete(q.id);
      await this.refreshSide();
    });
    return el("div", { class: "question", "data-testid": "question" },
      el("div", { class: "meta", text: `${q.from} asks ${q.to} (${time(q.time)})` }),
      el("div", { class: "content", text: q.content }),
      answer, button("answer", submit, "answer"));
  }

  async loadPanes() {
    const panes = await api("GET", `/api/teams/${this.id}/panes`);
    this.panes.replaceChildren(...panes.map((pane) => {
      const body = el("div", { class: "pane-body" });
      const viewer = el("div", { class: "pane-viewer", "data-testid": "pane-viewer", hidden: true });
      const context = { teamId: this.id, pane: pane.name, viewer };
      if (pane.error) body.append(el("p", { class: "error", text: pane.error }));
      for (const block of pane.blocks) body.append(renderBlock(block, context));
      if (pane.openable) body.append(viewer);
      // Panes start closed; one the reader opened stays open when the panes are redrawn.
      const box = el("details", { class: "pane", open: this.openPanes.has(pane.name), "data-pane": pane.name, "data-testid": "pane" },
        el("summary", { text: pane.title + (pane.source === "context" ? " (context)" : "") }), body);
      box.addEventListener("toggle", () => { if (box.open) this.openPanes.add(pane.name); else this.openPanes.delete(pane.name); });
      return box;
    }));
    if (!panes.length) this.panes.append(el("p", { class: "quiet", text: "no tool card" }));
  }

  async loadInspector() {
    const params = new URLSearchParams({ limit: "200" });
    if (this.filterType.value) params.set("type", this.filterType.value);
    if (this.filterMember.value) params.set("member", this.filterMember.value);
    const page = await api("GET", `/api/teams/${this.id}/events?` + params);
    this.inspector.replaceChildren();
    for (const row of page.events) this.addInspected(row, true);
  }

  addInspected(row, forced) {
    if (!forced) {
      if (!this.inspector.childElementCount) return; // the inspector was not opened
      if (this.filterType.value && row.type !== this.filterType.value && row.message_type !== this.filterType.value) return;
      if (this.filterMember.value && row.sender !== this.filterMember.value && row.recipient !== this.filterMember.value) return;
    }
    const show = attempt(async () => {
      const data = row.seq ? await api("GET", `/api/teams/${this.id}/events/${row.seq}`) : row;
      this.detail.textContent = JSON.stringify(data, null, 2);
    });
    this.inspector.append(el("li", { on: { click: show }, "data-testid": "inspected" },
      el("span", { class: "mono", text: row.seq === null ? "live" : "#" + row.seq }), " ",
      el("span", { text: row.type + (row.message_type ? " / " + row.message_type : "") }), " ",
      el("span", { class: "quiet", text: row.sender || "" })));
  }
}

function renderBlock(block, context) {
  if (block.kind === "list") return el("ul", {}, ...block.items.map((item) => el("li", { text: item })));
  if (block.kind === "table") {
    return el("table", {},
      el("thead", {}, el("tr", {}, ...block.columns.map((c) => el("th", { text: c })))),
      el("tbody", {}, ...block.rows.map((row) => el("tr", {}, ...row.map((cell) => el("td", { text: cell }))))));
  }
  if (block.kind === "graph") return renderGraph(block);
  if (block.kind === "tree") return renderTree(block, context);
  return el("pre", { class: "pane-text", text: block.text });
}

// A tree's openable items load into the pane's viewer through the pane's item API.
function renderTree(block, context) {
  const list = el("ul", { class: "tree", "data-testid": "pane-tree" });
  for (const item of block.items) {
    const label = el("span", { text: item.label });
    const row = el("li", { "data-key": item.key }, label);
    row.style.paddingLeft = `${item.depth * 1.1}em`; // CSSOM: allowed by the page's CSP
    if (item.openable && context) {
      row.classList.add("openable");
      row.addEventListener("click", attempt(async () => {
        const found = await api("GET", `/api/teams/${context.teamId}/panes/${encodeURIComponent(context.pane)}/item?key=${encodeURIComponent(item.key)}`);
        context.viewer.replaceChildren(...found.blocks.map((b) => renderBlock(b, context)));
        context.viewer.hidden = false;
      }));
    }
    list.append(row);
  }
  return list;
}

const SVG = "http://www.w3.org/2000/svg";

function svg(tag, attrs, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs || {})) node.setAttribute(key, String(value));
  if (text !== undefined) node.textContent = text;
  return node;
}

// Nodes on a circle, edges as labelled lines; the search box marks matching nodes
// (label, type or text) and dims the rest. Labels are SVG text nodes, never markup.
function renderGraph(block) {
  const size = 360, middle = size / 2, radius = block.nodes.length > 1 ? size / 2 - 60 : 0;
  const where = new Map();
  block.nodes.forEach((node, index) => {
    const angle = (2 * Math.PI * index) / Math.max(1, block.nodes.length) - Math.PI / 2;
    where.set(node.id, [middle + radius * Math.cos(angle), middle + radius * Math.sin(angle)]);
  });
  const drawing = svg("svg", { viewBox: `0 0 ${size} ${size}`, class: "graph", "data-testid": "pane-graph" });
  for (const edge of block.edges) {
    const [x1, y1] = where.get(edge.source), [x2, y2] = where.get(edge.target);
    drawing.append(svg("line", { x1, y1, x2, y2, class: "edge" }));
    drawing.append(svg("text", { x: (x1 + x2) / 2, y: (y1 + y2) / 2 - 3, class: "edge-label" }, edge.label));
  }
  const marks = [];
  for (const node of block.nodes) {
    const [x, y] = where.get(node.id);
    const group = svg("g", { class: "node", "data-node": node.id });
    group.append(svg("circle", { cx: x, cy: y, r: 7 }));
    const short = node.label.length > 24 ? node.label.slice(0, 23) + "…" : node.label;
    group.append(svg("text", { x, y: y - 11, "text-anchor": "middle" }, short));
    group.append(svg("title", {}, [node.label, node.group, node.text].filter(Boolean).join(" · ")));
    drawing.append(group);
    marks.push([node, group]);
  }
  const count = el("span", { class: "quiet", "data-testid": "graph-matches" });
  const search = el("input", { type: "search", placeholder: "search entities", "data-testid": "graph-search" });
  search.addEventListener("input", () => {
    const needle = search.value.trim().toLowerCase();
    let hits = 0;
    for (const [node, group] of marks) {
      const hit = needle !== "" && [node.label, node.group, node.text].some((v) => v.toLowerCase().includes(needle));
      if (hit) hits += 1;
      group.classList.toggle("hit", hit);
      group.classList.toggle("dim", needle !== "" && !hit);
    }
    count.textContent = needle ? `${hits} match${hits === 1 ? "" : "es"}` : "";
  });
  return el("div", { class: "graph-box" }, el("div", { class: "toolbar" }, search, count), drawing);
}

// ------------------------------------------------------------------ pictures

// Stream rows after which the pictures may have changed (besides messages).
const PICTURED = new Set(["StartMessage", "StopMessage", "ReceivedMessage", "ProcessedMessage",
  "LlmUsageEvent", "ToolCallEvent", "ToolReturnEvent"]);
const PICTURE_TAGS = new Set(["svg", "g", "line", "polyline", "rect", "circle", "text", "title"]);
const PICTURE_ATTRS = new Set(["viewBox", "width", "height", "x", "y", "x1", "y1", "x2", "y2",
  "cx", "cy", "r", "points", "class", "fill", "stroke", "stroke-width", "stroke-dasharray",
  "stroke-linecap", "text-anchor", "font-size", "role", "aria-label"]);

// The server builds the pictures as SVG with every label escaped. The page still
// never inserts that markup: it parses it as XML and copies only known elements,
// known attributes and text, so a label can only ever be text.
function importPicture(markup) {
  const parsed = new DOMParser().parseFromString(markup, "image/svg+xml");
  const root = parsed.documentElement;
  if (root.namespaceURI !== SVG || root.localName !== "svg" || parsed.getElementsByTagName("parsererror").length) {
    return el("p", { class: "error", text: "this picture could not be read" });
  }
  return copyPicture(root);
}

function copyPicture(node) {
  const copy = document.createElementNS(SVG, node.localName);
  for (const attr of node.attributes) {
    if (PICTURE_ATTRS.has(attr.name) || /^data-[a-z-]+$/.test(attr.name)) copy.setAttribute(attr.name, attr.value);
  }
  for (const child of node.childNodes) {
    if (child.nodeType === Node.TEXT_NODE) copy.append(document.createTextNode(child.data));
    else if (child.nodeType === Node.ELEMENT_NODE && child.namespaceURI === SVG && PICTURE_TAGS.has(child.localName)) {
      copy.append(copyPicture(child));
    }
  }
  return copy;
}

// ------------------------------------------------------------------ routing

function route() {
  if (current && current.stream) current.stream.close();
  current = null;
  const match = location.hash.match(/^#\/team\/([0-9a-fA-F-]{36})$/);
  flash("");
  if (match) showTeam(match[1]);
  else showList();
}

window.addEventListener("hashchange", route);
route();
