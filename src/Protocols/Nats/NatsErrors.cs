namespace Courier.Protocols.Nats;

/// <summary>The exact error texts nats-server sends in <c>-ERR '...'</c>.</summary>
public static class NatsErrors
{
    public const string UnknownProtocolOperation = "Unknown Protocol Operation";
    public const string MaxControlLineExceeded = "maximum control line exceeded";
    public const string MaxPayloadViolation = "Maximum Payload Violation";
    public const string AuthorizationViolation = "Authorization Violation";
    public const string AuthenticationTimeout = "Authentication Timeout";
    public const string UserAuthenticationExpired = "User Authentication Expired";
    public const string UserAuthenticationRevoked = "User Authentication Revoked";
    public const string StaleConnection = "Stale Connection";
    public const string SlowConsumer = "Slow Consumer";
    public const string InvalidSubject = "Invalid Subject";
    public const string InvalidPublishSubject = "Invalid Publish Subject";
    public const string MaxConnectionsExceeded = "maximum connections exceeded";
    public const string MaxAccountConnectionsExceeded = "maximum account active connections exceeded";
    public const string MaxSubscriptionsExceeded = "maximum subscriptions exceeded";
    public const string NoRespondersRequiresHeaders = "no responders requires headers support";
    public const string BadClientProtocol = "invalid client protocol";

    /// <summary>The text for a parse error.</summary>
    public static string ToText(ParseError error) => error switch
    {
        ParseError.MaxControlLineExceeded => MaxControlLineExceeded,
        ParseError.MaxPayloadViolation => MaxPayloadViolation,
        ParseError.InvalidArguments => "",
        _ => UnknownProtocolOperation,
    };

    /// <summary><c>Permissions Violation for Publish to "subject"</c>.</summary>
    public static string PublishViolation(string subject) => $"Permissions Violation for Publish to \"{subject}\"";

    /// <summary><c>Permissions Violation for Subscription to "subject"</c> (with the queue when there is one).</summary>
    public static string SubscribeViolation(string subject, string? queue) => queue is null
        ? $"Permissions Violation for Subscription to \"{subject}\""
        : $"Permissions Violation for Subscription to \"{subject}\" using queue \"{queue}\"";
}
