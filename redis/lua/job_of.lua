-- job_of(fields): the job text of a stream entry's field list, '' when
-- it has no job field, or false when the entry was deleted.
local function job_of(fields)
  if not fields then return false end
  for j = 1, #fields, 2 do
    if fields[j] == 'job' then return fields[j + 1] end
  end
  return ''
end
