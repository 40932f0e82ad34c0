npx tsc --noEmit
