"""The cophe dashboard: a Streamlit app; `streamlit run dashboard/app.py` or `cophe dashboard`."""
