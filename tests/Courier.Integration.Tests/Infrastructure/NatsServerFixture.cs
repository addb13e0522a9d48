namespace Courier.Integration.Tests.Infrastructure;

/// <summary>The reference: Debian's nats-server on a random loopback port.</summary>
public sealed class NatsServerFixture : ServerFixture
{
    public NatsServerFixture()
        : base(ServerKind.NatsServer)
    {
    }
}
