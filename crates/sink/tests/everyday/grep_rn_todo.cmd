grep -rn TODO apps/web/src
