/* Contestant views and score summaries of a scored job (docs/contest.md). */
