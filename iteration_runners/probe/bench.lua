function run_iter(n)
  local s = 0
  for i = 1, n do s = s + i end
  return s
end
