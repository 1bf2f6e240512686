-- The idle time that marks an entry handed back by a draining daemon:
-- ten years, which no entry reaches by waiting.
local RELEASED = 315360000000
