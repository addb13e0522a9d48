namespace Courier.Actors.Server;

/// <summary>One account as /accountz?acc= shows it.</summary>
public sealed record AccountSummary(
    string Name,
    int ClientConnections,
    int Subscriptions,
    bool JetStream,
    IReadOnlyList<ExportOptions> Exports,
    IReadOnlyList<ImportOptions> Imports);
