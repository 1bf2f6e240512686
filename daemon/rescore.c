/* Rescoring stored submissions from their jobs (docs/contest.md). */
