# The arguments of the reference run (sourced by make-reference.sh and check-reference.sh).
REFERENCE_ARGS=(--seed 20251 --quiet --fail-on never)
