namespace Courier.Integration.Tests.Infrastructure;

/// <summary>Which server process a test runs against.</summary>
public enum ServerKind
{
    /// <summary>The reference: Debian's Go <c>nats-server</c> (2.9.10).</summary>
    NatsServer,

    /// <summary>The system under test: <c>courier</c> built from src/Gateway.</summary>
    Courier,
}
