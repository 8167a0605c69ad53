from incidents.services.filing import IncidentChanges, incident_file, incident_resolve, incident_update

__all__ = ["IncidentChanges", "incident_file", "incident_resolve", "incident_update"]
