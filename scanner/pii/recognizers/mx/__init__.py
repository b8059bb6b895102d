"""Recognizers of Mexican identifiers and phone numbers (one module per identifier, as Presidio groups its
country-specific recognizers in one folder per country)."""
