# syntax=docker/dockerfile:1
# The runner's container image: Debian slim with bash, git and CA
# certificates, the static runner, and a non-root user (uid 10001).
# A toolchain is added by building FROM it (docs/install.md):
#
#   FROM ghcr.io/seed43ef5acb/runner:v0.1.0
#   USER root
#   RUN apt-get update && apt-get install -y --no-install-recommends golang-go && rm -rf /var/lib/apt/lists/*
#   USER runner
#
# Built by the release workflow for linux/amd64 and linux/arm64; locally:
#   docker build --build-arg VERSION=$(git describe --tags --always) -t runner .
ARG GO_VERSION=1.26.8
ARG DEBIAN=trixie

# The binary is cross-compiled on the build machine's platform: no
# emulation for Go, static (CGO_ENABLED=0) and stamped like the archives.
FROM --platform=$BUILDPLATFORM golang:${GO_VERSION}-${DEBIAN} AS build
ARG TARGETOS TARGETARCH VERSION=devel
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH go build -trimpath \
      -ldflags="-s -w -X github.com/seed43ef5acb/runner/pipeline.stampedVersion=${VERSION}" \
      -o /out/runner ./cmd/runner

FROM debian:${DEBIAN}-slim
# bash runs the agent's commands and the checks; git is what tasks and
# checks call (the runner itself uses go-git); CA certificates for HTTPS.
RUN apt-get update \
 && apt-get install -y --no-install-recommends bash git ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --create-home --uid 10001 --user-group --shell /bin/bash runner
COPY --from=build /out/runner /usr/local/bin/runner
USER 10001:10001
WORKDIR /home/runner
ENTRYPOINT ["runner"]
CMD ["--help"]
