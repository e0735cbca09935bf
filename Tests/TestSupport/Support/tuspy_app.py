"""A second tus implementation for interoperability tests: tuspyserver's FastAPI router, served by
uvicorn on 127.0.0.1 (`uvicorn tuspy_app:app --app-dir Support --port P`). Files go to $TUS_DIR."""
import os

from fastapi import FastAPI
from tuspyserver import create_tus_router

app = FastAPI()
app.include_router(create_tus_router(prefix="files", files_dir=os.environ.get("TUS_DIR", "/tmp/tuspy"), max_size=5 * 1024 * 1024))
