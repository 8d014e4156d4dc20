"""What leaves the package: charts, reports, figure and table exports, saved analyses."""
