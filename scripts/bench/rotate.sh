# Sourced by the interleaved benchmark scripts. rotate R "A B C": the R-th rotation of the list, so that round R
# starts with its R-th entry and no side always runs first (or always on the cooler machine).
rotate() {
  local -a xs=($2)
  local n=${#xs[@]} i
  for ((i = 0; i < n; i++)); do printf '%s ' "${xs[$(( (i + $1) % n ))]}"; done
}
