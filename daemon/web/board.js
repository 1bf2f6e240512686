// The scoreboard's live updates (served inline by tallyd, nothing fetched
// from elsewhere). The table is complete without this script; with it,
// the page follows the contest's Server-Sent Events and moves rows.
(function () {
  'use strict';
  clock();
  var table = document.getElementById('board');
  if (table) cells(table);
  if (!table || !window.EventSource) return;
  var d = table.dataset;
  var contest = d.contest, precision = +d.precision, elo = d.ranking === 'elo';
  var max = JSON.parse(d.max), tasks = JSON.parse(d.tasks);
  var people = JSON.parse(d.people || '{}');
  var order = tasks.slice().sort(function (a, b) { return a < b ? -1 : a > b ? 1 : 0; });
  var body = table.tBodies[0];
  var rows = Array.prototype.slice.call(body.rows);
  var status = document.getElementById('live');
  var queue = [], scheduled = false;
  var api = '/api/contests/' + encodeURIComponent(contest);
  if (d.ranking === 'pass-fail') return passFail();

  function fmt(x) { return String(+(+x).toFixed(precision)); }
  function value(r) { return +(elo ? r.dataset.rating : r.dataset.total); }
  function before(a, b) {
    var va = value(a), vb = value(b);
    if (va !== vb) return va > vb;
    return a.dataset.p < b.dataset.p;
  }
  function colour(td, s, task) {
    var m = max[task];
    var f = m > 0 ? Math.max(0, Math.min(1, s / m)) : 0;
    // A class of the page's style sheet (h0 red to h120 green): the
    // page's policy allows no style of any other origin.
    Array.prototype.slice.call(td.classList).forEach(function (c) {
      if (/^h[0-9]+$/.test(c)) td.classList.remove(c);
    });
    td.classList.add('h' + Math.round(f * 120));
  }
  function find(p) {
    for (var i = 0; i < rows.length; i++) if (rows[i].dataset.p === p) return rows[i];
    return null;
  }
  function create(p) {
    var r = document.createElement('tr');
    r.dataset.p = p;
    r.dataset.total = '0';
    r.dataset.rating = '0';
    var who = people[p] || [p, ''];
    var cells = elo ? ['', who[0], who[1], '0', '0', '0/0/0']
                    : ['', who[0], who[1], '0'];
    cells.forEach(function (t) { var td = r.insertCell(); td.textContent = t; });
    if (!elo) r.cells[3].className = 'total';
    if (!elo) tasks.forEach(function (t) {
      var td = r.insertCell(); td.dataset.t = t; td.textContent = '-';
      td.tabIndex = 0;
    });
    r.cells[0].className = 'rank';
    rows.push(r);
    body.appendChild(r);
    return r;
  }
  function place(r) {
    var at = rows.indexOf(r);
    if (at >= 0) rows.splice(at, 1);
    var lo = 0, hi = rows.length;
    while (lo < hi) {
      var mid = (lo + hi) >> 1;
      if (before(rows[mid], r)) lo = mid + 1; else hi = mid;
    }
    rows.splice(lo, 0, r);
    body.insertBefore(r, rows[lo + 1] || null);
  }
  function rerank() {
    var rank = 0;
    for (var i = 0; i < rows.length; i++) {
      if (i === 0 || value(rows[i]) !== value(rows[i - 1])) rank = i + 1;
      var c = rows[i].cells[0];
      if (c.textContent !== String(rank)) c.textContent = rank;
    }
  }
  function apply(ev) {
    var r = find(ev.participant) || create(ev.participant);
    if (ev.kind === 'rating') {
      r.dataset.rating = ev.rating === null ? 0 : ev.rating;
      r.cells[3].textContent = ev.rating === null ? '-' : fmt(ev.rating);
      r.cells[4].textContent = ev.matches;
      r.cells[5].textContent = ev.wins + '/' + ev.draws + '/' + ev.losses;
    } else {
      var td = null;
      for (var i = 4; i < r.cells.length; i++)
        if (r.cells[i].dataset.t === ev.task) td = r.cells[i];
      if (!td) return;
      td.dataset.s = ev.score;
      td.textContent = fmt(ev.score) + (ev.partial ? '*' : '');
      td.classList.toggle('partial', ev.partial);
      colour(td, ev.score, ev.task);
      if (td === opened) openCell(td);
      // The total adds the task scores in task name order, as tally does.
      var total = 0;
      order.forEach(function (t) {
        for (var k = 4; k < r.cells.length; k++)
          if (r.cells[k].dataset.t === t && r.cells[k].dataset.s !== undefined)
            total += +r.cells[k].dataset.s;
      });
      r.dataset.total = total;
      r.cells[3].textContent = fmt(total);
    }
    place(r);
  }
  function flush() {
    scheduled = false;
    queue.splice(0).forEach(apply);
    rerank();
  }
  function push(kind, e) {
    var ev = JSON.parse(e.data);
    ev.kind = kind;
    queue.push(ev);
    if (!scheduled) { scheduled = true; requestAnimationFrame(flush); }
  }
  function listen(onScore) {
    var src = new EventSource(api + '/events');
    src.addEventListener('score', onScore);
    src.addEventListener('rating', onScore);
    // The board froze or thawed, or a frozen one was resumed: load it anew.
    src.addEventListener('reload', function () { location.reload(); });
    src.onopen = function () { status.textContent = 'live'; status.className = 'on'; };
    src.onerror = function () { status.textContent = 'reconnecting'; status.className = 'off'; };
  }
  // A pass-fail board: a cell's tries, minute and first solve depend on
  // other teams' submissions, so each event reads the board's rows again
  // (at most one read in flight; one more after it if events came), and
  // once more 1.2 s after the last event: tallyd answers a board counted
  // within the last second again.
  function passFail() {
    var busy = false, again = false, trailing = null;
    function cell(td, c) {
      var tries = c.judged + c.pending;
      td.className = 'icpc ' + (c.solved ? (c.first ? 'solved first' : 'solved')
        : c.pending ? 'pending' : tries > 0 ? 'rejected' : '');
      td.textContent = c.solved ? '+' + (tries > 1 ? tries - 1 : '')
        : c.pending ? '?' + c.pending : tries > 0 ? '-' + tries : '';
      if (c.solved || c.pending) {
        var s = document.createElement('small');
        s.textContent = c.solved ? c.minute : tries + (tries === 1 ? ' try' : ' tries');
        td.appendChild(s);
      }
    }
    function draw(board) {
      var fresh = document.createElement('tbody');
      board.rows.forEach(function (w) {
        var r = fresh.insertRow();
        r.dataset.p = w.participant;
        [w.rank, w.name, w.team || '', w.solved, w.penalty].forEach(function (t, i) {
          var td = r.insertCell();
          td.textContent = t;
          if (i === 0) td.className = 'rank';
          if (i === 3) td.className = 'total';
        });
        tasks.forEach(function (t) { cell(r.insertCell(), w.tasks[t]); });
      });
      table.replaceChild(fresh, body);
      body = fresh;
    }
    function read() {
      if (busy) { again = true; return; }
      busy = true;
      fetch(api + '/ranking').then(function (r) { return r.json(); })
        .then(draw, function () {}).then(function () {
          busy = false;
          if (again) { again = false; read(); }
        });
    }
    listen(function () {
      read();
      clearTimeout(trailing);
      trailing = setTimeout(read, 1200);
    });
  }
  listen(function (e) { push(e.type, e); });

  // The contest's clock: where it stands, each second.
  function clock() {
    var p = document.getElementById('clock'), now = document.getElementById('clock-now');
    if (!p || !now) return;
    var start = p.dataset.start ? +p.dataset.start : null;
    var end = p.dataset.end ? +p.dataset.end : null;
    function span(s) {
      s = Math.max(0, Math.floor(s));
      var d = Math.floor(s / 86400), h = Math.floor(s / 3600) % 24;
      var m = Math.floor(s / 60) % 60, x = s % 60;
      return (d > 0 ? d + (d === 1 ? ' day ' : ' days ') : '') + h + ':' +
        (m < 10 ? '0' : '') + m + ':' + (x < 10 ? '0' : '') + x;
    }
    function tick() {
      var t = Date.now() / 1000;
      now.textContent = start !== null && t < start ? '(starts in ' + span(start - t) + ')'
        : end !== null && t < end ? '(running: ' + span(end - t) + ' left)'
        : end !== null ? '(ended)' : '(running)';
    }
    tick();
    setInterval(tick, 1000);
  }

  // A score opened (a click, or Enter on the focused cell): the
  // participant's score on that task subtask by subtask, as the API
  // counts it (/api/contests/C/ranking/P/T), under the table.
  var opened = null;
  function openCell(td) {
    var panel = document.getElementById('cell');
    var p = td.parentNode.dataset.p, t = td.dataset.t;
    if (!panel || !p || !t) return;
    opened = td;
    var url = '/api/contests/' + encodeURIComponent(table.dataset.contest) +
      '/ranking/' + encodeURIComponent(p) + '/' + encodeURIComponent(t);
    fetch(url).then(function (r) { return r.json(); }).then(function (c) {
      if (opened !== td) return;
      var prec = +table.dataset.precision;
      function f(x) { return x === null ? 'not public' : String(+(+x).toFixed(prec)); }
      var people = JSON.parse(table.dataset.people || '{}');
      panel.textContent = '';
      var h = document.createElement('h2');
      h.textContent = (people[p] ? people[p][0] : p) + ' · ' + t + ': ' +
        (c.score === null ? 'no score' : f(c.score) + ' of ' + f(c.max_score)) +
        (c.frozen ? ' (frozen)' : '');
      panel.appendChild(h);
      var note = document.createElement('p');
      note.className = 'note';
      note.textContent = c.submissions + (c.submissions === 1 ? ' submission' : ' submissions') +
        ', counted by ' + c.score_mode + (c.partial ? '; one could not be scored' : '');
      panel.appendChild(note);
      if (c.subtasks.length) {
        var tb = document.createElement('table');
        c.subtasks.forEach(function (s, i) {
          var r = tb.insertRow();
          [c.headers[i] || 'Subtask ' + i, f(s.score), s.submission || ''].forEach(function (x) {
            r.insertCell().textContent = x;
          });
        });
        panel.appendChild(tb);
      }
      panel.hidden = false;
    }, function () {});
  }
  function cells(table) {
    function pick(e) {
      var td = e.target.closest && e.target.closest('td[data-t]');
      if (!td || td.textContent === '-') return;
      if (e.type === 'keydown' && e.key !== 'Enter') return;
      openCell(td);
    }
    table.addEventListener('click', pick);
    table.addEventListener('keydown', pick);
  }
})();
