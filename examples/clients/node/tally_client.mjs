// A platform's side of tally, in Node.js with the redis package from npm.
//
// Pushes the jobs of a JSON-lines file to tallyd's queue, then follows
// three streams until every job has its outcome: the results (each one's
// body read from the key its entry names), the dead letters (jobs that can
// never be scored: reported, not retried), and the contestant events of
// one contest (a large view read from its key). docs/protocol.md describes
// every key.
//
//   node tally_client.mjs [--redis URL] [--prefix P] [--contest C] JOBS.jsonl
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { createClient } from 'redis';

const { values: opt, positionals } = parseArgs({
  options: {
    redis: { type: 'string', default: 'unix:///var/lib/tally/redis.sock' },
    prefix: { type: 'string', default: 'tally' },
    contest: { type: 'string', default: 'default' },
  },
  allowPositionals: true,
});
// unix:///path is a socket path to node-redis; redis://IP:PORT a URL.
const r = createClient(opt.redis.startsWith('unix://')
  ? { socket: { path: opt.redis.slice('unix://'.length) } }
  : { url: opt.redis });
await r.connect();
const p = opt.prefix;
const [results, dead, pub] = [`${p}:results`, `${p}:dead`, `${p}:public`];

// Where each stream ends now: what follows is ours (reading from "$" would
// miss what is posted between the XADDs and the first read).
const last = {};
for (const key of [results, dead, pub]) {
  const end = await r.xRevRange(key, '+', '-', { COUNT: 1 });
  last[key] = end.length ? end[0].id : '0';
}

// Push: one XADD per job, field "job"; the entry id names the job in its
// result or dead letter. Commands sent together are pipelined.
const jobs = readFileSync(positionals[0], 'utf8').split('\n').filter((l) => l.trim());
const waiting = new Set(await Promise.all(jobs.map((job) => r.xAdd(`${p}:jobs`, '*', { job }))));
console.log(`pushed ${waiting.size} jobs`);

while (waiting.size) {
  const got = await r.xRead(Object.entries(last).map(([key, id]) => ({ key, id })),
    { BLOCK: 5000, COUNT: 100 });
  for (const { name, messages } of got ?? []) {
    last[name] = messages[messages.length - 1].id;
    if (name === results) {
      // Each entry names the key of its result's body: GET them together.
      const bodies = await Promise.all(messages.map((m) => r.get(m.message.body)));
      messages.forEach((m, i) => {
        waiting.delete(m.message.entry);
        if (bodies[i] === null) return console.log(`result of ${m.message.entry}: gone`);
        const res = JSON.parse(bodies[i]);
        console.log(`result ${res.submission}: ${res.score}/${res.max_score} ` +
          `(public ${res.public_score})`);
      });
    } else if (name === dead) {
      // A job that can never be scored: its error names the cause. Fix the
      // job and XADD it anew; tallyd never retries it.
      for (const { message: f } of messages) {
        waiting.delete(f.id);
        let sub; // the job's text may be what is wrong
        try { sub = JSON.parse(f.job)?.submission; } catch { sub = undefined; }
        console.log(`dead letter ${sub}: ${f.error}`);
      }
    } else {
      for (const { message: f } of messages) {
        const ev = JSON.parse(f.event);
        if (ev.contest !== opt.contest) continue;
        // A large view lives in a key of its own.
        const view = ev.view_key ? JSON.parse(await r.get(ev.view_key) ?? 'null') : ev.view;
        console.log(`event ${ev.type} ${ev.participant} ${ev.task}: view ` +
          `${view?.score}, task score ${ev.task_score?.score}`);
      }
    }
  }
}
await r.quit();
