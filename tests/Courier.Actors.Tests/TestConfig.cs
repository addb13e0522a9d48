using Akka.Configuration;
using Courier.Actors.Hosting;
using Courier.Actors.Server;

namespace Courier.Actors.Tests;

/// <summary>
/// The configuration of a TestKit's actor system that hosts a broker: the server's own
/// (<see cref="ActorSystemConfig.Build"/>), with the TestKit's event listener as the logger so
/// <c>EventFilter</c> sees what the actors log.
/// </summary>
internal static class TestConfig
{
    public static Config For(ServerOptions options) =>
        ConfigurationFactory.ParseString("akka.loggers = [\"Akka.TestKit.TestEventListener, Akka.TestKit\"]")
            .WithFallback(ActorSystemConfig.Build(options));
}
