"""cophe dashboard: flat, set-based and CoPHE scores of ICD coding runs, by level and by family.

    streamlit run dashboard/app.py

The dashboard is the ``cophe_dashboard`` package beside this file (Streamlit puts this folder on the path);
its settings are in ``.streamlit/config.toml`` beside this file. See ``cophe_dashboard/app.py``.
"""

from cophe_dashboard.app import main

main()
