// Placeholder entry point so the Exe project builds; the main developer replaces it with the
// real host (flags and config through Courier.Gateway.Configuration.ServerConfiguration.Load).
return 0;
