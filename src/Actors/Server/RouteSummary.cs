namespace Courier.Actors.Server;

/// <summary>One route as /routez shows it.</summary>
public sealed record RouteSummary(
    ulong Rid,
    string RemoteId,
    string RemoteName,
    bool DidSolicit,
    bool IsConfigured,
    string Ip,
    int Port,
    DateTime Start,
    DateTime LastActivity,
    long PendingBytes,
    long InMsgs,
    long OutMsgs,
    long InBytes,
    long OutBytes,
    int Subscriptions);
