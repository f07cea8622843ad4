"""HTML reports: :func:`render_report` turns a run's metrics into a self-contained page."""

from .html import SECTION_RENDERERS, metric_table, register_section, render_report

__all__ = ["SECTION_RENDERERS", "metric_table", "register_section", "render_report"]
