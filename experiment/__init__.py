"""Human study: Flask server, jsPsych front end, storage, admin and export."""
