from incidents.services.filing import incident_file, incident_resolve, incident_update

__all__ = ["incident_file", "incident_resolve", "incident_update"]
