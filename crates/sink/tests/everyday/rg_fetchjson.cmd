rg -n 'fetchJson\('
