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
    IReadOnlyList<SubscriptionInfo> Subscriptions,
    DateTime? Stop,
    string? Reason,
    string? TlsVersion = null,
    string? TlsCipherSuite = null,
    string Type = ConnectionTypes.Nats,
    string? MqttClient = null,
    string Account = "$G",
    TimeSpan Rtt = default,
    string? Username = null);

/// <summary>
/// One subscription as monitoring shows it (nats-server's SubDetail): /connz <c>subs=detail</c> and
/// /subsz <c>subs=1</c>. <see cref="Account"/> is the subscriber's account.
/// </summary>
public sealed record SubscriptionInfo(string Subject, string? Queue, string Sid, long Msgs, long Max, ulong Cid, string Account);
