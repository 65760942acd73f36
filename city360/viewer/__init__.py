"""city360.viewer: a web app to walk a city, author tasks, and play them as a human.

``city360 view CITY_DIR [--suite SUITE] [--host 127.0.0.1] [--port 8360] [--token TOKEN]
[--output-root DIR]`` serves three screens from one FastAPI app (plain HTML + JS modules, no
build step, nothing fetched from the network):

- **Walk**: the perspective view, the location map and a pose readout; keys W/A/S/D/Q/E and the
  arrow keys (or buttons) move, a selector sets the magnitude; clicking the city map jumps to the
  nearest pose.
- **Author**: a form for each of the seven task families filled from poses picked while walking,
  verified (schema, answer format, the oracle reaching the goal) before it is saved to the suite.
- **Play**: a task with exactly the agent's observation and actions, ending with ANSWER, scored
  and written as a ``human`` row in the eval results format.

Light to import: FastAPI and uvicorn are loaded by :mod:`city360.viewer.app` and the command.
"""

__all__: list[str] = []
