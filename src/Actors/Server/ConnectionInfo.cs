namespace Courier.Actors.Server;

/// <summary>One connection as /connz shows it.</summary>
public sealed record ConnectionInfo(
    ulong Cid,
    string Ip,
    int Port,
    DateTime Start,
    DateTime LastActivity,
    string? Name,
    string? Lang,
    string? Version,
    string? AuthorizedUser,
    long InMsgs,
    long InBytes,
    long OutMsgs,
    long OutBytes,
    long PendingBytes,
    IReadOnlyList<string> Subscriptions,
    DateTime? Stop,
    string? Reason,
    string? TlsVersion = null,
    string? TlsCipherSuite = null,
    string Type = ConnectionTypes.Nats,
    string? MqttClient = null,
    string Account = "$G",
    TimeSpan Rtt = default);
