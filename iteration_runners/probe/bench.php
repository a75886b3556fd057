<?php
function run_iter($n) {
  $s = 0;
  for ($i = 0; $i < $n; $i++) { $s += $i; }
  return $s;
}
