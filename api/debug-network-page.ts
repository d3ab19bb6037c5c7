/**
 * `/debug/network`: one self-contained HTML page (no external assets) that polls `/v1/network/status` every two
 * seconds and shows at a glance whether the node is healthy, syncing or starved of peers: the verdict, the
 * supervisor state and its retry countdown, coverage and blocks remaining, peers by origin, material requests by
 * outcome, sessions and disconnect reasons, the manager rows, and the NAT mapping (mode, state, external address,
 * mapped ports, next retry or renewal), and the JetStream publication (servers known, per instance published
 * sequence, lag, resets and state). Values are written with textContent only.
 */
export const DEBUG_NETWORK_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Chain Data Node — network</title>
<style>
  body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5rem; color: #1d2430; background: #f6f7f9; }
  h1 { font-size: 1.3rem; margin: 0 0 .2rem; }
  h2 { font-size: 1rem; margin: 0 0 .5rem; color: #4a5568; }
  .sub { color: #6b7280; margin-bottom: 1rem; }
  .grid { display: grid; grid-template-columns: repeat(auto-fit, minmax(300px, 1fr)); gap: 1rem; }
  .card { background: #fff; border: 1px solid #e2e5ea; border-radius: 8px; padding: .9rem 1rem; overflow-x: auto; }
  .verdict { font-size: 1.25rem; font-weight: 600; padding: .5rem .8rem; border-radius: 6px; display: inline-block; }
  .healthy { background: #dcfce7; color: #166534; } .syncing { background: #fef9c3; color: #854d0e; }
  .starved, .down { background: #fee2e2; color: #991b1b; } .idle { background: #e5e7eb; color: #374151; }
  table { border-collapse: collapse; width: 100%; }
  td, th { text-align: left; padding: .2rem .3rem; border-bottom: 1px solid #eef0f3; font-variant-numeric: tabular-nums; }
  th { color: #6b7280; font-weight: 500; }
  .num { text-align: right; }
  .err { color: #991b1b; word-break: break-word; }
  .muted { color: #6b7280; }
</style>
</head>
<body>
<h1>Network</h1>
<div class="sub">Live snapshot of <code>/v1/network/status</code>, refreshed every 2 s. <span id="updated" class="muted"></span></div>
<div class="card" style="margin-bottom:1rem">
  <span id="verdict" class="verdict idle">loading…</span>
  <span id="verdict-detail" class="muted" style="margin-left:.6rem"></span>
</div>
<div class="grid">
  <div class="card"><h2>Coverage</h2><table>
    <tr><th>source</th><td id="source"></td></tr>
    <tr><th>ready / live ready</th><td id="readiness"></td></tr>
    <tr><th>stored range</th><td id="stored-range"></td></tr>
    <tr><th>stored range contiguous</th><td id="contiguous"></td></tr>
    <tr><th>sync target block</th><td id="sync-target"></td></tr>
    <tr><th>blocks remaining</th><td id="blocks-remaining"></td></tr>
  </table><div id="note" class="muted" style="margin-top:.5rem"></div></div>
  <div class="card"><h2>Supervisor</h2><table>
    <tr><th>state</th><td id="supervisor-state"></td></tr>
    <tr><th>retry in</th><td id="retry"></td></tr>
    <tr><th>failures</th><td id="failures"></td></tr>
    <tr><th>last error</th><td id="last-error" class="err"></td></tr>
    <tr><th>sessions active / established</th><td id="sessions"></td></tr>
    <tr><th>bans active / total</th><td id="bans"></td></tr>
  </table></div>
  <div class="card"><h2>NAT</h2><table>
    <tr><th>mode / state</th><td id="nat-state"></td></tr>
    <tr><th>external address</th><td id="nat-address"></td></tr>
    <tr><th>mapped ports</th><td id="nat-ports"></td></tr>
    <tr><th>next</th><td id="nat-next"></td></tr>
    <tr><th>last error</th><td id="nat-error" class="err"></td></tr>
  </table></div>
  <div class="card"><h2>Peers by origin</h2><table id="origins"><thead><tr><th>origin</th><th class="num">admitted</th><th class="num">sessions</th><th class="num">qualified</th><th class="num">rejected</th></tr></thead><tbody></tbody></table></div>
  <div class="card"><h2>Material requests</h2><table id="requests"><thead><tr><th>lane : outcome</th><th class="num">count</th></tr></thead><tbody></tbody></table>
    <div class="muted" id="waiting"></div></div>
  <div class="card"><h2>Disconnects and refusals</h2><table id="disconnects"><thead><tr><th>reason</th><th class="num">count</th></tr></thead><tbody></tbody></table></div>
  <div class="card"><h2>JetStream publication</h2><div id="publication-summary" class="muted"></div>
    <table id="publication"><thead><tr><th>instance</th><th>state</th><th class="num">published</th><th class="num">lag changes</th><th class="num">lag s</th><th class="num">resets</th></tr></thead><tbody></tbody></table></div>
  <div class="card"><h2>Managers</h2><table id="managers"><thead><tr><th>#</th><th>phase</th><th class="num">peers</th><th>requested</th><th class="num">attempts</th><th class="num">changed</th></tr></thead><tbody></tbody></table></div>
</div>
<script>
(function () {
  var $ = function (id) { return document.getElementById(id); };
  var set = function (id, text) { $(id).textContent = text; };
  function rows(tableId, list) {
    var body = $(tableId).querySelector('tbody');
    body.textContent = '';
    if (list.length === 0) { var tr = body.insertRow(); var td = tr.insertCell(); td.colSpan = 6; td.className = 'muted'; td.textContent = 'none'; return; }
    list.forEach(function (cells) {
      var tr = body.insertRow();
      cells.forEach(function (cell, i) { var td = tr.insertCell(); td.textContent = String(cell); if (i > 0 && typeof cell === 'number') td.className = 'num'; });
    });
  }
  function verdict(s) {
    var n = s.network;
    if (n.source === 'p2p') {
      var active = n.sessions ? n.sessions.active : 0;
      if (n.supervisor && n.supervisor.state === 'backing_off') return ['starved', 'starved of peers', 'no session; supervised retry in ' + (n.supervisor.retryInSeconds === null ? '?' : n.supervisor.retryInSeconds + ' s')];
      if (active === 0) return ['starved', 'starved of peers', 'no qualified session'];
    }
    if (!s.readiness.liveReady) {
      if (n.source === 'p2p' || s.blocksRemaining > 0) return ['syncing', 'syncing', s.blocksRemaining + ' blocks remaining'];
      return ['down', 'not ready', 'the live lane is not ready'];
    }
    return ['healthy', 'healthy', 'following the head' + (s.blocksRemaining > 0 ? ' (' + s.blocksRemaining + ' announced block(s) being fetched)' : '')];
  }
  function render(s) {
    var v = verdict(s);
    $('verdict').className = 'verdict ' + v[0];
    set('verdict', v[1]);
    set('verdict-detail', v[2]);
    var n = s.network;
    set('source', n.source);
    set('readiness', String(s.readiness.ready) + ' / ' + String(s.readiness.liveReady));
    set('stored-range', s.storedRange ? s.storedRange.from + ' – ' + s.storedRange.to : 'empty');
    set('contiguous', String(s.storedRangeContiguous));
    set('sync-target', s.syncTargetBlock === null ? '—' : String(s.syncTargetBlock));
    set('blocks-remaining', String(s.blocksRemaining));
    set('note', n.applies.note || n.error || '');
    var sup = n.supervisor;
    set('supervisor-state', sup ? sup.state : 'not applicable');
    set('retry', sup && sup.retryInSeconds !== null ? sup.retryInSeconds + ' s' : '—');
    set('failures', sup ? String(sup.failures) : '—');
    set('last-error', sup && sup.lastError ? sup.lastError : '—');
    set('sessions', n.sessions ? n.sessions.active + ' / ' + n.sessions.established : '—');
    set('bans', n.bans ? n.bans.active + ' / ' + n.bans.total : '—');
    var nat = n.nat;
    set('nat-state', nat ? nat.mode + ' / ' + nat.state + (nat.gateway ? ' (' + nat.gateway + ')' : '') : 'not applicable');
    set('nat-address', nat && nat.externalAddress ? nat.externalAddress : '—');
    set('nat-ports', nat && nat.mappings.length > 0 ? nat.mappings.map(function (m) { return m.purpose + ' ' + m.protocol + ' ' + m.internalPort + '→' + m.externalPort; }).join(', ') : '—');
    set('nat-next', nat && nat.retryInSeconds !== null ? 'retry in ' + nat.retryInSeconds + ' s (' + nat.failures + ' failed)' : nat && nat.renewInSeconds !== null ? 'renewal in ' + nat.renewInSeconds + ' s' : '—');
    set('nat-error', nat && nat.lastError ? nat.lastError : '—');
    var o = n.byOrigin;
    rows('origins', o ? Object.keys(o.admissions).map(function (k) { return [k, o.admissions[k], o.sessions[k], o.qualifications[k].qualified, o.qualifications[k].rejected]; }) : []);
    var r = n.materialRequests;
    rows('requests', r ? Object.keys(r.byOutcome).sort().map(function (k) { return [k, r.byOutcome[k]]; }) : []);
    set('waiting', r ? 'waited for peer slots: ' + r.waitingForPeerSlotsMs + ' ms' : '');
    var d = [];
    if (n.sessions) {
      Object.keys(n.sessions.disconnects).forEach(function (k) { d.push(['disconnect: ' + k, n.sessions.disconnects[k]]); });
      Object.keys(n.sessions.handshakeFailures).forEach(function (k) { d.push(['refused: ' + k, n.sessions.handshakeFailures[k]]); });
    }
    rows('disconnects', d);
    rows('managers', n.managers.map(function (m) { return [m.id, m.phase + (m.active ? '' : ' (stopped)'), m.connectedPeers, m.requestedRange ? m.requestedRange.from + '–' + m.requestedRange.to : '—', m.attempts, m.lastChangeSecondsAgo + ' s ago']; }));
    var p = s.publication;
    set('publication-summary', p ? 'stream ' + p.stream + ': ' + p.servers + ' server(s) known; reported ' + new Date(p.reportedAt).toLocaleTimeString() : 'off ([delivery.jetstream] enabled = false) or not reported yet');
    rows('publication', p ? p.processors.map(function (q) { return [q.instance, q.state, q.publishedSequence, q.lagChanges, Math.round(q.lagSeconds * 10) / 10, q.resets]; }) : []);
    set('updated', 'updated ' + new Date(s.generatedAt).toLocaleTimeString());
  }
  function refresh() {
    fetch('/v1/network/status', { cache: 'no-store' }).then(function (r) { return r.json(); }).then(render).catch(function (e) {
      $('verdict').className = 'verdict down'; set('verdict', 'unreachable'); set('verdict-detail', String(e));
    }).finally(function () { setTimeout(refresh, 2000); });
  }
  refresh();
})();
</script>
</body>
</html>
`;
