export declare const buildDir: (root: string) => string;
export declare const manifestFile: (root: string) => string;
export declare function sourceState(root: string): Record<string, string>;
export declare const isTest: (name: string) => boolean;
export declare function buildIsCurrent(root: string): boolean;
