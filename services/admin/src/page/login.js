// Shows the "wrong token" line after a refused login (POST /login redirects to /login?failed=1).
if (new URLSearchParams(location.search).has("failed")) document.getElementById("login-error").hidden = false;
