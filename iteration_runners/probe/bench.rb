def run_iter(n)
  (0...n).sum
end
