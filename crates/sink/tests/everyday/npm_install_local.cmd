npm install
