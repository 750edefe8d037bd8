"""Structural check of docker-compose.yml without a Docker engine (used in review, not in CI):
parses the YAML (merge keys resolved), and checks the parts README.md promises."""
import sys
import yaml

with open(sys.argv[1] if len(sys.argv) > 1 else "docker-compose.yml") as f:
    doc = yaml.safe_load(f)

services = doc["services"]
expected = {"postgres", "nats", "store", "provider-gateway", "run-worker", "cursor-adapter", "edge-proxy"}
assert set(services) == expected, sorted(services)
for name in ["store", "provider-gateway", "run-worker", "cursor-adapter", "edge-proxy"]:
    s = services[name]
    assert s["command"] == ["node", f"services/{name}/src/main.ts"], (name, s["command"])
    assert s["build"] == ".", name
    assert s["environment"]["NATS_URL"] == "nats://nats:4222", name
    assert ("DATABASE_URL" in s["environment"]) == (name == "store"), name
    assert ("env_file" in s) == (name == "provider-gateway"), name
assert services["run-worker"]["deploy"]["replicas"] == 3
assert services["edge-proxy"]["ports"] == ["${EDGE_PROXY_PORT:-8080}:8080"]
assert "-js" in services["nats"]["command"]
for name in ["provider-gateway", "cursor-adapter", "edge-proxy"]:
    mounts = [v for v in services[name]["volumes"] if isinstance(v, dict)]
    assert any(m["target"] == "/app/config/gateway.json" and m["read_only"] for m in mounts), name
print("docker-compose.yml: ok (%d services)" % len(services))
